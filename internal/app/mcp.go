package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/internal/mcpserver"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
)

// RunMCP is `weft mcp`: the MCP server over stdin and stdout, for a local
// MCP client that starts weft as a subprocess. It runs until the client
// closes stdin or ctx ends. stdout carries only the protocol; logs go
// elsewhere. It reads the database as `weft serve` migrated it, and needs
// no API token: whoever can start the process can read the database anyway.
func RunMCP(ctx context.Context, cfg *Config, logger *slog.Logger, stdin io.Reader, stdout io.Writer) error {
	store, pool, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	dis, err := surfacediscord.New(cfg.Discord, store, logger)
	if err != nil {
		return err
	}
	_, installs, err := newSlackOAuth(cfg.SlackInstall, store, logger)
	if err != nil {
		return err
	}
	sl, err := surfaceslack.New(cfg.Slack, store, installs, logger)
	if err != nil {
		return err
	}
	// No registry: nothing scrapes a stdio process.
	rep, err := newReplies(store, dis, sl, nil, logger)
	if err != nil {
		return err
	}
	s := mcpserver.New(mcpserver.Deps{Store: store, Replies: rep, Logger: logger})
	transport := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := s.Run(ctx, transport); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// nopWriteCloser keeps the transport from closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
