package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigPools(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		env          map[string]string
		work, intake int
		wantErr      bool
	}{
		{name: "Defaults", work: 4, intake: 8},
		{name: "Set", env: map[string]string{"WEFT_DB_CONNS": "20", "WEFT_INTAKE_DB_CONNS": "12"}, work: 20, intake: 12},
		{name: "NotANumber", env: map[string]string{"WEFT_DB_CONNS": "many"}, wantErr: true},
		{name: "Zero", env: map[string]string{"WEFT_INTAKE_DB_CONNS": "0"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.work, cfg.DBConns)
			require.Equal(t, tc.intake, cfg.intakeDB().DBConns, "the intake pool is sized apart")
			require.Equal(t, tc.work, cfg.DBConns, "sizing the intake leaves the processor's pool as it was")
		})
	}
}
