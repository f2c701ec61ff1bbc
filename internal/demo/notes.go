package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The demo's MCP server: one tool that changes something, write_note,
// which appends a note to a file. Its annotations say nothing of being
// read-only, so weft's default approval rule ("writes") has a person
// approve each call.
const (
	notesServer = "notes"
	notesTool   = "write_note"
	// notesToolName is the tool as the model sees it (Claude Code's naming).
	notesToolName = "mcp__" + notesServer + "__" + notesTool
)

// Note is one write_note call as the notes server stored it.
type Note struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// ServeNotes is the demo's notes MCP server, on stdin and stdout: weft
// starts it as a stdio server from the WEFT_MCP_CONFIG file the demo
// writes (`weft demo -mcp-notes FILE`). Each write_note call appends one
// JSON line to file, so the demo (and its test) can count the calls made.
func ServeNotes(ctx context.Context, file string) error {
	s := mcp.NewServer(&mcp.Implementation{Name: notesServer, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: notesTool, Title: "Write a note",
		Description: "Add a note (a title and its text) to the team's notes file."},
		func(_ context.Context, _ *mcp.CallToolRequest, n Note) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(n.Title) == "" || strings.TrimSpace(n.Text) == "" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "a note needs a title and a text"}}}, nil, nil
			}
			count, err := appendNote(file, n)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("Wrote note %d, “%s”, to the team's notes.", count, n.Title)}}}, nil, nil
		})
	return s.Run(ctx, &mcp.StdioTransport{})
}

// appendNote adds n to file and returns how many notes it holds.
func appendNote(file string, n Note) (int, error) {
	line, err := json.Marshal(n)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("notes: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return 0, fmt.Errorf("notes: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("notes: %w", err)
	}
	notes, err := ReadNotes(file)
	return len(notes), err
}

// ReadNotes is every note written to file, in order; none when it does
// not exist yet.
func ReadNotes(file string) ([]Note, error) {
	raw, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	var out []Note
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if line == "" {
			continue
		}
		var n Note
		if err := json.Unmarshal([]byte(line), &n); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

// writeMCPConfig writes the WEFT_MCP_CONFIG file that points weft at the
// notes server, started as command with the notes file appended to its
// arguments, and returns its path.
func (w *World) writeMCPConfig(command []string) (string, error) {
	if len(command) == 0 {
		return "", fmt.Errorf("demo: no command starts the notes MCP server")
	}
	cfg := map[string]any{"mcpServers": map[string]any{notesServer: map[string]any{
		"command": command[0], "args": append(append([]string(nil), command[1:]...), w.NotesFile),
	}}}
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := w.dir + "/mcp.json"
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("demo: write the MCP config: %w", err)
	}
	return path, nil
}
