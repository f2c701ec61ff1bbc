package llmtest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTextOf covers the content forms both protocols accept, as they come
// out of the request's decoding.
func TestTextOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		want          string
		ok            bool
	}{
		{name: "String", content: `"hi\nthere"`, want: "hi\nthere", ok: true},
		{name: "Null", content: `null`, want: "", ok: true},
		{name: "Parts", content: `[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]`, want: "a\nb", ok: true},
		{name: "PartWithNullText", content: `[{"type":"text","text":null}]`, want: "", ok: true},
		{name: "NoParts", content: `[]`, want: "", ok: true},
		{name: "PartNotAnObject", content: `["a"]`},
		{name: "PartTextNotAString", content: `[{"type":"text","text":1}]`},
		{name: "PartTypeNotAString", content: `[{"type":true,"text":"a"}]`},
		{name: "Number", content: `1`},
		{name: "Object", content: `{"text":"a"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v any
			require.NoError(t, json.Unmarshal([]byte(tt.content), &v))
			got, ok := textOf(v)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
