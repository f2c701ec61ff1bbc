package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
)

func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	srv := api.NewServer(api.Deps{Logger: logtest.New(t), DB: pinger{}, Token: token})
	h := apitest.Handler(t, srv)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))

	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3."))
	var documented []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			var o struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			require.NoError(t, json.Unmarshal(op, &o))
			require.NotEmpty(t, o.OperationID, "%s %s", method, path)
			require.NotEmpty(t, o.Responses, "%s %s", method, path)
		}
	}
	routed := routes(t, srv)
	slices.Sort(documented)
	slices.Sort(routed)
	// Every route documented, and every documented operation routed.
	require.Equal(t, routed, documented)
}

func TestOpenAPIDocumentsEveryCode(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Code struct {
							Enum []httpapi.Code `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(api.OpenAPI(), &doc))
	documented := doc.Components.Schemas.Error.Properties.Code.Enum
	slices.Sort(documented)
	require.Equal(t, httpapi.Codes(), documented)
}
