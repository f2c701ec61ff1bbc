package agent

import (
	"encoding/json"

	"github.com/weft-dev/weft/internal/toolschema"
)

// Control tools end a turn rather than feed a result back to the model, so
// the runner handles them itself; they are offered beside the registry's.
const (
	toolAskUser        = "ask_user"
	toolCompleteThread = "complete_thread"
)

type controlTool struct {
	name, description string
	schema            json.RawMessage
	autonomousOnly    bool
}

var controlTools = []controlTool{
	{
		name:        toolAskUser,
		description: "Ask the user a question when you cannot go on without their answer. Offer options when the answer is a choice. The turn ends until they reply.",
		schema:      toolschema.For[askUserArgs](),
	},
	{
		name:           toolCompleteThread,
		description:    "Finish the thread's goal and record its result.",
		schema:         toolschema.For[completeArgs](),
		autonomousOnly: true,
	},
}

type askUserArgs struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty" jsonschema:"choices to offer, if any"`
}

type completeArgs struct {
	Result string `json:"result" jsonschema:"the outcome, for whoever reads it later"`
}
