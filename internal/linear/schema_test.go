package linear_test

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// fullSchemaPath is Linear's complete SDL, vendored with its provenance
// in testdata/SOURCE.md.
const fullSchemaPath = "testdata/linear-full-schema.graphql"

func loadSchema(t *testing.T, path string) *ast.Schema {
	t.Helper()
	sdl, err := os.ReadFile(path)
	require.NoError(t, err)
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: path, Input: string(sdl)})
	require.NoError(t, err)
	return schema
}

// TestSchemaSubsetMatchesLinear keeps schema.graphql an honest subset: every
// type, field, argument, enum value and union member in it exists in
// Linear's schema with the same type, and nothing Linear requires (a
// non-null argument or input field without a default) is left out.
func TestSchemaSubsetMatchesLinear(t *testing.T) {
	t.Parallel()
	sub := loadSchema(t, "schema.graphql")
	full := loadSchema(t, fullSchemaPath)

	require.Equal(t, full.Query.Name, sub.Query.Name)
	require.Equal(t, full.Mutation.Name, sub.Mutation.Name)
	for name, def := range sub.Types {
		if def.BuiltIn {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := full.Types[name]
			require.NotNil(t, want, "type %s is not in Linear's schema", name)
			require.Equal(t, want.Kind, def.Kind)
			for _, f := range def.Fields {
				wf := want.Fields.ForName(f.Name)
				require.NotNil(t, wf, "%s.%s is not in Linear's schema", name, f.Name)
				require.Equal(t, wf.Type.String(), f.Type.String(), "%s.%s", name, f.Name)
				for _, a := range f.Arguments {
					wa := wf.Arguments.ForName(a.Name)
					require.NotNil(t, wa, "%s.%s(%s) is not in Linear's schema", name, f.Name, a.Name)
					require.Equal(t, wa.Type.String(), a.Type.String(), "%s.%s(%s)", name, f.Name, a.Name)
				}
				for _, wa := range wf.Arguments {
					if wa.Type.NonNull && wa.DefaultValue == nil {
						require.NotNil(t, f.Arguments.ForName(wa.Name), "%s.%s is missing required argument %s", name, f.Name, wa.Name)
					}
				}
			}
			if def.Kind == ast.InputObject {
				for _, wf := range want.Fields {
					if wf.Type.NonNull && wf.DefaultValue == nil {
						require.NotNil(t, def.Fields.ForName(wf.Name), "input %s is missing required field %s", name, wf.Name)
					}
				}
			}
			for _, v := range def.EnumValues {
				require.NotNil(t, want.EnumValues.ForName(v.Name), "%s.%s is not in Linear's schema", name, v.Name)
			}
			for _, member := range def.Types {
				require.True(t, slices.Contains(want.Types, member), "%s is not a member of %s in Linear's schema", member, name)
			}
		})
	}
}

// TestOperationsValidate checks operations.graphql against both the subset
// genqlient generates from and Linear's full schema, so that an operation
// the fake accepts is one Linear accepts too.
func TestOperationsValidate(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("operations.graphql")
	require.NoError(t, err)
	for _, path := range []string{"schema.graphql", fullSchemaPath} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			doc, err := parser.ParseQuery(&ast.Source{Name: "operations.graphql", Input: string(src)})
			require.NoError(t, err)
			require.NotEmpty(t, doc.Operations)
			require.Empty(t, validator.ValidateWithRules(loadSchema(t, path), doc, nil))
		})
	}
}
