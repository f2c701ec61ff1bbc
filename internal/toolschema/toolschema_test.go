package toolschema_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/toolschema"
)

type place struct {
	ChannelID string `json:"channel_id,omitempty" jsonschema:"where to read"`
}

type args struct {
	Query   string   `json:"query" jsonschema:"what to find"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many" minimum:"1" maximum:"200"`
	Order   string   `json:"order,omitempty" enum:"oldest,newest"`
	Options []string `json:"options,omitempty"`
	place
}

func TestFor(t *testing.T) {
	t.Parallel()
	require.JSONEq(t, `{
		"type": "object",
		"properties": {
			"query": {"type": "string", "description": "what to find"},
			"limit": {"type": "integer", "description": "how many", "minimum": 1, "maximum": 200},
			"order": {"type": "string", "enum": ["oldest", "newest"]},
			"options": {"type": ["null", "array"], "items": {"type": "string"}},
			"channel_id": {"type": "string", "description": "where to read"}
		},
		"required": ["query"],
		"additionalProperties": false
	}`, string(toolschema.For[args]()))
	require.JSONEq(t, `{"type": "object", "additionalProperties": false}`, string(toolschema.For[struct{}]()))
}

func TestForRefusesMistakes(t *testing.T) {
	t.Parallel()
	type badBound struct {
		Limit int `json:"limit" minimum:"one"`
	}
	require.PanicsWithValue(t, `toolschema: toolschema_test.badBound.Limit: minimum "one" is not a number`, func() { toolschema.For[badBound]() })
	require.Panics(t, func() { toolschema.For[string]() }, "arguments are an object")
	require.Panics(t, func() { toolschema.For[struct{ F func() }]() }, "a type JSON cannot carry")
}
