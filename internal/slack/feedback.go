package slack

import (
	"strings"

	goslack "github.com/slack-go/slack"
)

// FeedbackActionID is the action_id of the feedback buttons under weft's
// answers; the block holding them is FeedbackBlockPrefix and the answer's
// outbox row id, so that a click says which answer it rates.
const (
	FeedbackActionID    = "weft_feedback"
	FeedbackBlockPrefix = "weft_feedback:"
)

// The values the feedback buttons send.
const (
	FeedbackPositive = "positive"
	FeedbackNegative = "negative"
)

// sectionLimit is the most a section block's text holds.
const sectionLimit = 3000

// AnswerBlocks is an answer's text as Block Kit (mrkdwn sections, so it
// reads as the plain post would) with feedback buttons under it: a
// context_actions block of feedback_buttons whose block_id names the
// outbox row. text is mrkdwn, escaped already.
func AnswerBlocks(text, outboxID string) []goslack.Block {
	var blocks []goslack.Block
	for _, part := range Split(text, sectionLimit) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		blocks = append(blocks, goslack.NewSectionBlock(goslack.NewTextBlockObject(goslack.MarkdownType, part, false, false), nil, nil))
	}
	up := goslack.NewFeedbackButton(goslack.NewTextBlockObject(goslack.PlainTextType, "👍", true, false), FeedbackPositive)
	up.AccessibilityLabel = "Good answer"
	down := goslack.NewFeedbackButton(goslack.NewTextBlockObject(goslack.PlainTextType, "👎", true, false), FeedbackNegative)
	down.AccessibilityLabel = "Bad answer"
	buttons := goslack.NewFeedbackButtonsBlockElement(FeedbackActionID, up, down)
	return append(blocks, goslack.NewContextActionsBlock(FeedbackBlockPrefix+outboxID, buttons))
}
