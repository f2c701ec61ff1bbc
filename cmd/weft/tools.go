package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/mcpclient"
)

const toolsUsage = `usage: weft tools check

Connects to every MCP server of WEFT_MCP_CONFIG, lists the tools the agent
will see (mcp__SERVER__TOOL) with each one's approval rule, and exits
non-zero naming any server that failed. See docs/tools.md.
`

// toolsCmd runs weft tools.
func toolsCmd(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] != "check" {
		return badUsage(stderr, "tools")
	}
	if cfg.MCP == nil {
		return errors.New("tools check: WEFT_MCP_CONFIG is not set")
	}
	m := mcpclient.New(mcpclient.Deps{Config: cfg.MCP, Logger: logger})
	if err := mcpclient.PrintReports(stdout, m.Check(ctx)); err != nil {
		return fmt.Errorf("tools check: %w", err)
	}
	return nil
}
