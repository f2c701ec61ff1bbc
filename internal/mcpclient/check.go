package mcpclient

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Report is what Check found of one server.
type Report struct {
	Server string
	Err    error        // nil when it connected and listed its tools
	Tools  []ReportTool // the tools the agent would see
}

// ReportTool is one tool the agent would see and its approval rule.
type ReportTool struct {
	Name     string // mcp__SERVER__TOOL
	Approval string // "runs at once" or "waits for approval"
}

// Check connects to every server once, at the same time, lists the tools
// the agent would see, and disconnects. Tools left out are logged.
func (m *Manager) Check(ctx context.Context) []Report {
	out := make([]Report, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() {
			out[i] = Report{Server: s.name}
			cs, err := s.connect(ctx)
			if err != nil {
				out[i].Err = err
				return
			}
			defer cs.Close()
			if err := s.list(ctx, cs); err != nil {
				out[i].Err = err
				return
			}
			for _, t := range s.Tools() {
				rule := "runs at once"
				if t.NeedsApproval {
					rule = "waits for approval"
				}
				out[i].Tools = append(out[i].Tools, ReportTool{Name: t.Name, Approval: rule})
			}
		})
	}
	wg.Wait()
	return out
}

// PrintReports writes reports as weft tools check prints them and returns
// an error naming the servers that failed.
func PrintReports(w io.Writer, reports []Report) error {
	var failed []string
	for _, r := range reports {
		if r.Err != nil {
			fmt.Fprintf(w, "%s: FAILED: %v\n", r.Server, r.Err)
			failed = append(failed, r.Server)
			continue
		}
		fmt.Fprintf(w, "%s: %d tools\n", r.Server, len(r.Tools))
		for _, t := range r.Tools {
			fmt.Fprintf(w, "  %-48s %s\n", t.Name, t.Approval)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("mcp servers failed: %s", strings.Join(failed, ", "))
	}
	return nil
}
