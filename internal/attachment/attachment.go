// Package attachment reads the files people attach to their messages for
// the model: an image becomes an [llm.Image], a text file is inlined within a
// budget, anything else is named with its type and size. Each download is
// bounded in size and time and made by the platform's [Downloader], which
// knows the platform's authentication (a bot token as a Bearer, say).
package attachment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// Downloader fetches one file of its platform into w. It stops with an
// error when w does (the size bound) or ctx ends (the time bound).
type Downloader interface {
	Download(ctx context.Context, f thread.File, w io.Writer) error
}

// Limits bound what is read. Zero fields take the defaults below.
type Limits struct {
	// MaxBytes bounds one file's download; a larger file is named only.
	MaxBytes int64
	// Timeout bounds one file's download.
	Timeout time.Duration
	// TextBudget bounds the text inlined from one message's files, in
	// bytes; text past it is cut and marked.
	TextBudget int
	// MaxFiles is how many files of one message are read; the rest are
	// named.
	MaxFiles int
}

// Defaults. 5 MiB is the largest image Anthropic's API takes.
const (
	DefaultMaxBytes   = 5 << 20
	DefaultTimeout    = 20 * time.Second
	DefaultTextBudget = 32 << 10
	DefaultMaxFiles   = 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.TextBudget <= 0 {
		l.TextBudget = DefaultTextBudget
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// Kind is how a file reaches the model.
type Kind int

const (
	KindOther Kind = iota // named with its type and size
	KindImage             // sent as an image
	KindText              // inlined
)

// images are the media types both providers accept.
var images = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// textTypes are text files whose type is not text/*.
var textTypes = map[string]bool{"application/json": true, "application/xml": true, "application/x-yaml": true,
	"application/yaml": true, "application/javascript": true, "application/x-sh": true, "application/toml": true,
	"application/sql": true, "application/x-ndjson": true}

// AnyImage is the media type of a file known to be an image of a type not
// yet known (a markdown image): its bytes tell which.
const AnyImage = "image/*"

// MediaType is f's type: the platform's, else its name's extension's.
func MediaType(f thread.File) string {
	t := f.MediaType
	if t == "" || t == "application/octet-stream" {
		if byExt := mime.TypeByExtension(path.Ext(f.Name)); byExt != "" {
			t = byExt
		}
	}
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	return t
}

// KindOf says how f reaches the model, by its type.
func KindOf(f thread.File) Kind {
	t := MediaType(f)
	switch {
	case images[t] || t == AnyImage:
		return KindImage
	case strings.HasPrefix(t, "text/") || textTypes[t]:
		return KindText
	}
	return KindOther
}

// Fetcher reads files for the model. Safe for concurrent use. A file read
// is kept for a while (see cacheTTL), since every model call of a turn
// sends the whole conversation again.
type Fetcher struct {
	limits    Limits
	platforms map[thread.Platform]Downloader
	logger    *slog.Logger
	now       func() time.Time

	mu    sync.Mutex
	cache map[string]cached
	bytes int64
}

type cached struct {
	data    []byte
	err     error
	expires time.Time
}

// cacheTTL is how long a file read is kept; cacheBytes bounds all kept
// files together.
const (
	cacheTTL   = 10 * time.Minute
	cacheBytes = 64 << 20
)

// New returns a Fetcher reading each platform's files with its downloader;
// a platform without one has its files named only.
func New(limits Limits, platforms map[thread.Platform]Downloader, logger *slog.Logger) *Fetcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Fetcher{limits: limits.withDefaults(), platforms: platforms, logger: logger, now: time.Now, cache: map[string]cached{}}
}

// errTooLarge is a download cut at the size bound.
var errTooLarge = errors.New("attachment: file larger than the bound")

// Expand reads the files of s (its metadata's) for the model: text that
// follows the message's own (each file named, text files' contents
// inlined) and the images to send with it. A message without files
// returns "" and none.
func (f *Fetcher) Expand(ctx context.Context, s *thread.Stitch) (string, []llm.Image) {
	files := s.Meta().Files
	if len(files) == 0 {
		return "", nil
	}
	var (
		b      strings.Builder
		imgs   []llm.Image
		budget = f.limits.TextBudget
	)
	for i, file := range files {
		kind, mt := KindOf(file), MediaType(file)
		label := fmt.Sprintf("%s (%s, %s)", file.Name, orUnknown(mt), Size(file.Size))
		if kind == KindOther {
			fmt.Fprintf(&b, "\n[attached file %s: not shown to you]", label)
			continue
		}
		if i >= f.limits.MaxFiles {
			fmt.Fprintf(&b, "\n[attached file %s: not read, the message has more than %d files]", label, f.limits.MaxFiles)
			continue
		}
		if file.Size > f.limits.MaxBytes {
			fmt.Fprintf(&b, "\n[attached file %s: not read, larger than %s]", label, Size(f.limits.MaxBytes))
			continue
		}
		data, err := f.read(ctx, s.Source, file)
		switch {
		case errors.Is(err, errTooLarge):
			fmt.Fprintf(&b, "\n[attached file %s: not read, larger than %s]", label, Size(f.limits.MaxBytes))
			continue
		case err != nil:
			fmt.Fprintf(&b, "\n[attached file %s: could not be fetched]", label)
			continue
		}
		if kind == KindImage && !images[mt] {
			if mt = http.DetectContentType(data); !images[mt] {
				fmt.Fprintf(&b, "\n[attached file %s (%s, %s): not shown to you, not an image the model reads]", file.Name, mt, Size(int64(len(data))))
				continue
			}
		}
		label = fmt.Sprintf("%s (%s, %s)", file.Name, mt, Size(int64(len(data))))
		if kind == KindImage {
			fmt.Fprintf(&b, "\n[attached image %s: shown to you below]", label)
			imgs = append(imgs, llm.Image{MediaType: mt, Name: file.Name, Data: data, Size: len(data)})
			continue
		}
		if !utf8.Valid(data) {
			fmt.Fprintf(&b, "\n[attached file %s: not shown to you, not UTF-8 text]", label)
			continue
		}
		text, cut := string(data), false
		if len(text) > budget {
			text, cut = cutUTF8(text, budget), true
		}
		budget -= len(text)
		fmt.Fprintf(&b, "\n[attached file %s]\n%s", label, text)
		if cut {
			b.WriteString("\n[the rest of this file was cut: the text budget of one message is spent]")
		}
		b.WriteString("\n[end of file " + file.Name + "]")
	}
	return b.String(), imgs
}

// read is the file's bytes, bounded in size and time, from the cache when
// read recently.
func (f *Fetcher) read(ctx context.Context, platform thread.Platform, file thread.File) ([]byte, error) {
	d := f.platforms[platform]
	if d == nil || file.URL == "" {
		return nil, fmt.Errorf("attachment: no downloader for %q", platform)
	}
	key := string(platform) + " " + file.Workspace + " " + file.URL
	now := f.now()
	f.mu.Lock()
	if c, ok := f.cache[key]; ok && now.Before(c.expires) {
		f.mu.Unlock()
		return c.data, c.err
	}
	f.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, f.limits.Timeout)
	defer cancel()
	w := &boundedWriter{max: f.limits.MaxBytes}
	err := d.Download(ctx, file, w)
	if w.over {
		err = errTooLarge
	}
	if err != nil && !errors.Is(err, errTooLarge) {
		f.logger.WarnContext(ctx, "attachment download failed", slog.String("platform", string(platform)),
			slog.String("name", file.Name), slog.Any("error", err))
		return nil, err // not kept: the next call tries again
	}
	f.keep(key, cached{data: w.buf, err: err, expires: now.Add(cacheTTL)})
	return w.buf, err
}

// keep caches c, dropping expired entries and then any others while the
// cache holds more than cacheBytes.
func (f *Fetcher) keep(key string, c cached) {
	if int64(len(c.data)) > cacheBytes {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for k, old := range f.cache {
		if !now.Before(old.expires) || f.bytes+int64(len(c.data)) > cacheBytes {
			f.bytes -= int64(len(old.data))
			delete(f.cache, k)
		}
	}
	if old, ok := f.cache[key]; ok {
		f.bytes -= int64(len(old.data))
	}
	f.cache[key] = c
	f.bytes += int64(len(c.data))
}

// boundedWriter keeps up to max bytes and fails past them.
type boundedWriter struct {
	buf  []byte
	max  int64
	over bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if int64(len(w.buf)+len(p)) > w.max {
		w.over = true
		return 0, errTooLarge
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Size is n bytes for a person: "812 B", "34.2 KB", "1.3 MB".
func Size(n int64) string {
	switch {
	case n <= 0:
		return "size unknown"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func orUnknown(t string) string {
	if t == "" {
		return "type unknown"
	}
	return t
}

// cutUTF8 is s cut to at most n bytes, not inside a character.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
