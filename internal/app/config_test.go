package app

import (
	"os"
	"path/filepath"
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

func TestConfigPersona(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, empty := filepath.Join(dir, "persona.txt"), filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(file, []byte("You are Ada, Acme's release engineer.\n"), 0o600))
	require.NoError(t, os.WriteFile(empty, []byte(" \n"), 0o600))
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{name: "Default", want: ""},
		{name: "Text", env: map[string]string{"WEFT_PERSONA": " You are Ada. "}, want: "You are Ada."},
		{name: "File", env: map[string]string{"WEFT_PERSONA_FILE": file}, want: "You are Ada, Acme's release engineer."},
		{name: "Both", env: map[string]string{"WEFT_PERSONA": "x", "WEFT_PERSONA_FILE": file}, wantErr: true},
		{name: "MissingFile", env: map[string]string{"WEFT_PERSONA_FILE": filepath.Join(dir, "nope")}, wantErr: true},
		{name: "EmptyFile", env: map[string]string{"WEFT_PERSONA_FILE": empty}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.Persona)
		})
	}
}
