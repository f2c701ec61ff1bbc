// Package toolschema makes the JSON Schema of a tool's arguments from the
// Go struct they decode into, for the agent's tools and the MCP server's
// alike, so a schema cannot drift from the arguments its handler reads.
//
// google/jsonschema-go reads the struct: a field's JSON name, its type,
// whether it is required (no omitempty) and its description (the
// jsonschema tag). What that tag cannot say, three more tags do: enum
// (values separated by commas), minimum and maximum.
package toolschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// For is the schema of T's JSON form, an object. It panics when T cannot
// be described or a tag is malformed: tools are declared once, at start,
// and a test of each package that declares them catches the mistake.
func For[T any]() json.RawMessage {
	b, err := build(reflect.TypeFor[T]())
	if err != nil {
		panic(fmt.Sprintf("toolschema: %v", err))
	}
	return b
}

func build(t reflect.Type) (json.RawMessage, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s: tool arguments are a struct", t)
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		prop := s.Properties[name]
		if prop == nil {
			continue // unexported or "-"
		}
		if v, ok := f.Tag.Lookup("enum"); ok {
			for e := range strings.SplitSeq(v, ",") {
				prop.Enum = append(prop.Enum, e)
			}
		}
		for tag, bound := range map[string]**float64{"minimum": &prop.Minimum, "maximum": &prop.Maximum} {
			v, ok := f.Tag.Lookup(tag)
			if !ok {
				continue
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %s %q is not a number", t, f.Name, tag, v)
			}
			*bound = &n
		}
	}
	return json.Marshal(s)
}
