package agent

import (
	"encoding/json"
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
		schema: json.RawMessage(`{"type":"object","properties":{` +
			`"question":{"type":"string"},` +
			`"options":{"type":"array","items":{"type":"string"},"description":"choices to offer, if any"}},` +
			`"required":["question"]}`),
	},
	{
		name:           toolCompleteThread,
		description:    "Finish the thread's goal and record its result.",
		schema:         json.RawMessage(`{"type":"object","properties":{"result":{"type":"string","description":"the outcome, for whoever reads it later"}},"required":["result"]}`),
		autonomousOnly: true,
	},
}

type askUserArgs struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

type completeArgs struct {
	Result string `json:"result"`
}
