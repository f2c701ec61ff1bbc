package thread

import (
	"encoding/json"
	"fmt"
	"time"
)

// Output is something weft says on the surface a thread's latest input came
// from. It becomes an outbox row for that platform.
type Output struct {
	Kind OutboxKind
	OutboxBody
	// Stitch is the index in Effects.Stitches of the stitch it comes from.
	Stitch int
}

// OutboxBody is an outbox row's body: what a platform sender needs to post
// it. Fields that do not apply to the kind are empty.
type OutboxBody struct {
	Text      string   `json:"text,omitempty"`
	Action    string   `json:"action,omitempty"`    // an action's tool name
	Parameter string   `json:"parameter,omitempty"` // an action's input
	Result    string   `json:"result,omitempty"`    // an action's result
	Options   []string `json:"options,omitempty"`   // an elicitation's choices
	// ExternalURL and ExternalURLLabel link a Linear session elsewhere (a
	// session_update).
	ExternalURL      string `json:"external_url,omitempty"`
	ExternalURLLabel string `json:"external_url_label,omitempty"`
	// Approval, on an elicitation, makes it a request for approval that
	// a platform may answer with buttons (Approve, Deny).
	Approval *ApprovalAsk `json:"approval,omitempty"`
	// Echo marks a post mirroring the conversation on another surface of
	// the thread (EchoPolicy): one the platform refuses is noted on the
	// thread but never fails it, since the answer itself went out.
	Echo bool `json:"echo,omitempty"`
}

// Effects is one step of a thread's life, recorded all together or not at
// all: stitches to append, outputs to send, a status to move to.
type Effects struct {
	Stitches []Stitch
	Outputs  []Output
	Status   *StatusChange
	// Approvals are requests for approval to store, each tied to its
	// approval_request stitch by index.
	Approvals []ApprovalRequest
}

// Meta is the part of a stitch's metadata weft reads back from the chain.
type Meta struct {
	// AnsweredThrough says every input up to this seq has been answered, or
	// deliberately left unanswered (a stop, a failure).
	AnsweredThrough int64 `json:"answered_through,omitempty"`
	// ToolCallID ties a tool result to the model's call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Stop marks the stitch recording a user's stop.
	Stop bool `json:"stop,omitempty"`
	// OutboxID marks an error stitch that records a post the platform
	// refused: a note on the thread, not a failure of its turn.
	OutboxID string `json:"outbox_id,omitempty"`
	// ModelBusySince marks the notice that the model is unavailable and the
	// turn retries: when the outage began, by the agent's clock, so its
	// retry window survives the turn giving its worker up meanwhile.
	ModelBusySince *time.Time `json:"model_busy_since,omitempty"`
	// IntentOf marks the stitch recording that a call with side effects
	// (this model call id) is about to be made: with no result after it,
	// the call's outcome is unknown and it is never made again.
	IntentOf string `json:"intent_of,omitempty"`
	// Unknown marks a tool call's result that weft could not know: weft
	// stopped while the call ran.
	Unknown bool `json:"unknown_outcome,omitempty"`
	// ApprovalFor ties an approval request or decision to the model's
	// call (its id) that waits for it.
	ApprovalFor string `json:"approval_for,omitempty"`
	// Decision is an approval_decision's: approve or deny.
	Decision Decision `json:"decision,omitempty"`
	// Files are the files a person's message carried (Slack files,
	// Discord attachments, images in a Linear issue): where to fetch them,
	// never their bytes. internal/attachment reads them for the model.
	Files []File `json:"files,omitempty"`
	// Images are the pictures a tool's result carried (an MCP tool's image
	// content), kept whole with its stitch: the call is never made again
	// to read them, and every later model call of the thread sends them.
	Images []Image `json:"images,omitempty"`
}

// Image is a picture a tool returned, for a model that sees. Its bytes
// are stored (base64 in the stitch's metadata).
type Image struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

// File is a file attached to a message, as its platform describes it.
type File struct {
	Name string `json:"name"`
	// MediaType is the platform's MIME type; empty when it gave none.
	MediaType string `json:"media_type,omitempty"`
	// Size is in bytes, as the platform reports it; 0 when unknown.
	Size int64  `json:"size,omitempty"`
	URL  string `json:"url"`
	// Workspace is whose token fetches the file (a Slack team id); empty
	// when the URL needs none.
	Workspace string `json:"workspace,omitempty"`
}

// Meta reads the stitch's metadata; metadata weft did not write reads as empty.
func (s *Stitch) Meta() Meta {
	var m Meta
	if len(s.Metadata) > 0 {
		_ = json.Unmarshal(s.Metadata, &m)
	}
	return m
}

// JSON encodes m for Stitch.Metadata.
func (m Meta) JSON() json.RawMessage {
	b, _ := json.Marshal(m) // a struct of plain fields always marshals
	return b
}

// StopEffects records a user's stop of a thread whose head is at seq
// through: the input so far is dealt with, the thread is aborted, and a
// final response confirms it.
func StopEffects(through int64, text string) Effects {
	return Effects{
		Stitches: []Stitch{{Type: StitchAgentThought, Content: text, Metadata: Meta{AnsweredThrough: through, Stop: true}.JSON()}},
		Outputs:  []Output{{Kind: OutboxResponse, OutboxBody: OutboxBody{Text: text}}},
		Status:   &StatusChange{To: StatusAborted},
	}
}

// JSON encodes the body for Outbox.Body.
func (b OutboxBody) JSON() json.RawMessage {
	out, _ := json.Marshal(b) // a struct of strings always marshals
	return out
}

// Content decodes the row's body, for the platform senders. A body that is
// not an OutboxBody is ErrInvalid: resending it cannot help.
func (o *Outbox) Content() (OutboxBody, error) {
	var b OutboxBody
	if err := json.Unmarshal(o.Body, &b); err != nil {
		return b, fmt.Errorf("outbox %s: decode body: %w: %w", o.ID, ErrInvalid, err)
	}
	return b, nil
}
