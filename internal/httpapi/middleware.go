package httpapi

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/weft-dev/weft/internal/logging"
	"github.com/weft-dev/weft/internal/metrics"
)

// RequestID returns the request's id, set by chi's RequestID middleware.
func RequestID(ctx context.Context) string { return middleware.GetReqID(ctx) }

// Log writes one line per request, after it is answered, with its id, and
// puts the id on the request's context, so that every line logged with it
// carries the id too (logging.Handler). It counts the request in m by its
// route pattern, which it reads after the router has matched it.
func Log(logger *slog.Logger, m *metrics.Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			r = r.WithContext(logging.With(r.Context(), slog.String("request_id", RequestID(r.Context()))))
			next.ServeHTTP(ww, r)
			m.HTTPRequest(route(r), r.Method, ww.Status(), time.Since(start))
			level := slog.LevelInfo
			if ww.Status() >= 500 {
				level = slog.LevelError
			}
			logger.LogAttrs(r.Context(), level, "http request",
				slog.String("request_id", RequestID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("duration", time.Since(start)))
		})
	}
}

// Recover turns a handler's panic into a logged 500 instead of a dropped
// connection.
func Recover(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					logger.ErrorContext(r.Context(), "handler panicked",
						slog.String("request_id", RequestID(r.Context())), slog.Any("panic", p))
					Encode(w, http.StatusInternalServerError, ErrorBody{Error: "internal error", Code: CodeInternal, RequestID: RequestID(r.Context())})
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// RequireJSON refuses a request whose body is not declared
// application/json with a 415, before any handler reads it. A request
// without a body passes whatever it declares; the first byte is peeked, as
// a chunked body's length is unknown until then.
func RequireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			br := bufio.NewReader(r.Body)
			if _, err := br.Peek(1); err == nil && !isJSON(r.Header.Get("Content-Type")) {
				Encode(w, http.StatusUnsupportedMediaType, ErrorBody{
					Error: "the body must be application/json", Code: CodeUnsupportedMediaType, RequestID: RequestID(r.Context()),
				})
				return
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{br, r.Body}
		}
		next.ServeHTTP(w, r)
	})
}

// isJSON reports whether a Content-Type is application/json, with or
// without parameters.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// NotFound answers a path no route serves.
func NotFound(w http.ResponseWriter, r *http.Request) {
	Encode(w, http.StatusNotFound, ErrorBody{
		Error: "no route serves " + r.URL.Path, Code: CodeNotFound, RequestID: RequestID(r.Context()),
	})
}

// MethodNotAllowed answers a method a path does not serve, saying in Allow
// which it does: allowed reports the methods routed for a path.
func MethodNotAllowed(allowed func(path string) []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		methods := allowed(r.URL.Path)
		w.Header().Set("Allow", strings.Join(methods, ", "))
		Encode(w, http.StatusMethodNotAllowed, ErrorBody{
			Error: r.Method + " is not allowed here; use " + strings.Join(methods, " or "), Code: CodeMethodNotAllowed,
			RequestID: RequestID(r.Context()),
		})
	}
}

// unmatched labels requests no route matched: their paths are not labels.
const unmatched = "unmatched"

// route is the pattern the router matched r with ("/api/v1/threads/{id}").
// A router handed a path prefix ("/webhooks/*") by another, rather than
// mounted, records the whole path's pattern after the prefix's: the
// prefix is dropped then.
func route(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil || len(rc.RoutePatterns) == 0 {
		return unmatched
	}
	ps := rc.RoutePatterns
	var b strings.Builder
	for i, p := range ps {
		if i+1 < len(ps) && strings.HasSuffix(p, "/*") && strings.HasPrefix(ps[i+1], strings.TrimSuffix(p, "*")) {
			continue
		}
		b.WriteString(strings.TrimSuffix(p, "/*"))
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}
