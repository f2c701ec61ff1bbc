package console

import (
	"context"
	"encoding/json"
	"fmt"
)

// partialData is a "partial" event's data: the whole text the model has
// written so far of the call answering through AfterSeq. A "partial_end"
// carries AfterSeq alone: the text is void (its stitch is on the page, or
// the call failed). The script shows it as text, never as markup.
type partialData struct {
	AfterSeq int64  `json:"after_seq"`
	Text     string `json:"text,omitempty"`
}

// sendPartial writes the thread's partial answer when it changed since the
// last sent (see partial.View).
func (s *stream) sendPartial(ctx context.Context) error {
	p, err := s.c.d.Store.Partial(ctx, s.id)
	if err != nil {
		return err
	}
	ev, ok := s.view.Next(p)
	if !ok {
		return nil
	}
	name := "partial"
	if ev.End {
		name = "partial_end"
	}
	data, err := json.Marshal(partialData{AfterSeq: ev.AfterSeq, Text: ev.Text})
	if err != nil {
		return fmt.Errorf("encode partial: %w", err)
	}
	return writeEvent(s.w, name, "", string(data))
}
