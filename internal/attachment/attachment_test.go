package attachment

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// files is a Downloader over a map of URL to content that counts how many
// bytes each download wrote, so a test sees a bound hold.
type files struct {
	mu      sync.Mutex
	content map[string][]byte
	written map[string]int
	calls   map[string]int
}

func (d *files) Download(ctx context.Context, f thread.File, w io.Writer) error {
	d.mu.Lock()
	d.calls[f.URL]++
	d.mu.Unlock()
	b, ok := d.content[f.URL]
	if !ok {
		return errors.New("404")
	}
	// Written in small chunks, as a body arrives.
	for len(b) > 0 {
		n := min(len(b), 1024)
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		d.mu.Lock()
		d.written[f.URL] += n
		d.mu.Unlock()
		b = b[n:]
	}
	return nil
}

func stitch(fs ...thread.File) *thread.Stitch {
	return &thread.Stitch{Source: thread.PlatformSlack, Metadata: thread.Meta{Files: fs}.JSON()}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nimage bytes")
	big := []byte(strings.Repeat("x", 5000))
	realPNG := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRxxxx")
	d := &files{content: map[string][]byte{
		"u/png": png, "u/txt": []byte("line one\nline two"), "u/json": []byte(`{"a":1}`),
		"u/big": big, "u/long": []byte(strings.Repeat("é", 100)), "u/bin": {0xff, 0xfe, 0x00}, "u/realpng": realPNG,
	}, written: map[string]int{}, calls: map[string]int{}}
	f := New(Limits{MaxBytes: 4096, TextBudget: 40}, map[thread.Platform]Downloader{thread.PlatformSlack: d}, nil)

	tests := []struct {
		name       string
		files      []thread.File
		wantText   []string
		wantImages []llm.Image
		notText    []string
	}{
		{name: "image", files: []thread.File{{Name: "shot.png", MediaType: "image/png", Size: int64(len(png)), URL: "u/png"}},
			wantText:   []string{"[attached image shot.png (image/png, 19 B): shown to you below]"},
			wantImages: []llm.Image{{MediaType: "image/png", Name: "shot.png", Data: png, Size: len(png)}}},
		{name: "text inlined", files: []thread.File{{Name: "notes.txt", MediaType: "text/plain", Size: 17, URL: "u/txt"}},
			wantText: []string{"[attached file notes.txt (text/plain, 17 B)]\nline one\nline two\n[end of file notes.txt]"}},
		{name: "type from the name", files: []thread.File{{Name: "a.json", URL: "u/json"}},
			wantText: []string{"[attached file a.json (application/json, 7 B)]\n{\"a\":1}"}},
		{name: "other is named, not fetched", files: []thread.File{{Name: "deck.pdf", MediaType: "application/pdf", Size: 1 << 20, URL: "u/pdf"}},
			wantText: []string{"[attached file deck.pdf (application/pdf, 1.0 MB): not shown to you]"}},
		{name: "declared too large: not fetched", files: []thread.File{{Name: "huge.txt", MediaType: "text/plain", Size: 1 << 30, URL: "u/huge"}},
			wantText: []string{"[attached file huge.txt (text/plain, 1024.0 MB): not read, larger than 4.0 KB]"}},
		{name: "larger than declared: cut at the bound", files: []thread.File{{Name: "liar.txt", MediaType: "text/plain", Size: 10, URL: "u/big"}},
			wantText: []string{"[attached file liar.txt (text/plain, 10 B): not read, larger than 4.0 KB]"}, notText: []string{"xxx"}},
		{name: "budget cuts text on a character", files: []thread.File{{Name: "e.txt", MediaType: "text/plain", URL: "u/long"}},
			wantText: []string{"[attached file e.txt (text/plain, 200 B)]\n" + strings.Repeat("é", 20) + "\n[the rest of this file was cut"}},
		{name: "not UTF-8", files: []thread.File{{Name: "b.txt", MediaType: "text/plain", URL: "u/bin"}},
			wantText: []string{"[attached file b.txt (text/plain, 3 B): not shown to you, not UTF-8 text]"}},
		{name: "an image of a type its bytes tell", files: []thread.File{{Name: "upload", MediaType: AnyImage, URL: "u/realpng"}},
			wantText:   []string{"[attached image upload (image/png, 20 B): shown to you below]"},
			wantImages: []llm.Image{{MediaType: "image/png", Name: "upload", Data: realPNG, Size: len(realPNG)}}},
		{name: "an image that is not", files: []thread.File{{Name: "upload", MediaType: AnyImage, URL: "u/txt"}},
			wantText: []string{"[attached file upload (text/plain; charset=utf-8, 17 B): not shown to you, not an image the model reads]"}},
		{name: "fetch fails", files: []thread.File{{Name: "gone.png", MediaType: "image/png", Size: 5, URL: "u/gone"}},
			wantText: []string{"[attached file gone.png (image/png, 5 B): could not be fetched]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, imgs := f.Expand(t.Context(), stitch(tt.files...))
			for _, w := range tt.wantText {
				require.Contains(t, text, w)
			}
			for _, w := range tt.notText {
				require.NotContains(t, text, w)
			}
			require.Equal(t, tt.wantImages, imgs)
		})
	}
	require.Zero(t, d.calls["u/pdf"], "a file of another kind is never downloaded")
	require.Zero(t, d.calls["u/huge"], "a file declared larger than the bound is never downloaded")
	require.LessOrEqual(t, d.written["u/big"], 4096, "a download stops at the bound")

	// Every model call of a turn sends the conversation again: a file read
	// once is not downloaded again.
	_, _ = f.Expand(t.Context(), stitch(thread.File{Name: "shot.png", MediaType: "image/png", URL: "u/png"}))
	require.Equal(t, 1, d.calls["u/png"])
	// A failed download is tried again.
	_, _ = f.Expand(t.Context(), stitch(thread.File{Name: "gone.png", MediaType: "image/png", URL: "u/gone"}))
	require.Equal(t, 2, d.calls["u/gone"])

	// A platform without a downloader has its files named only.
	text, imgs := f.Expand(t.Context(), &thread.Stitch{Source: thread.PlatformDiscord, Metadata: thread.Meta{Files: []thread.File{{Name: "a.png", MediaType: "image/png", URL: "u/png"}}}.JSON()})
	require.Contains(t, text, "could not be fetched")
	require.Empty(t, imgs)
}

func TestExpandTextBudgetIsPerMessage(t *testing.T) {
	t.Parallel()
	d := &files{content: map[string][]byte{"a": []byte(strings.Repeat("a", 30)), "b": []byte(strings.Repeat("b", 30))},
		written: map[string]int{}, calls: map[string]int{}}
	f := New(Limits{TextBudget: 40}, map[thread.Platform]Downloader{thread.PlatformSlack: d}, nil)
	text, _ := f.Expand(t.Context(), stitch(thread.File{Name: "a.txt", URL: "a"}, thread.File{Name: "b.txt", URL: "b"}))
	require.Contains(t, text, strings.Repeat("a", 30)+"\n[end of file a.txt]")
	require.Contains(t, text, "\n"+strings.Repeat("b", 10)+"\n[the rest of this file was cut")
	require.NotContains(t, text, strings.Repeat("b", 11))
}
