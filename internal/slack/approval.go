package slack

import (
	"context"
	"strings"

	goslack "github.com/slack-go/slack"
)

// ApprovalActionPrefix begins the action_id of the Approve and Deny buttons
// under a request for approval: "weft_approval:<approval id>:approve" or
// ":deny". The block holding them is ApprovalBlockPrefix and the id.
const (
	ApprovalActionPrefix = "weft_approval:"
	ApprovalBlockPrefix  = "weft_approval:"
)

// The decisions a button's action_id ends with.
const (
	ApprovalApprove = "approve"
	ApprovalDeny    = "deny"
)

// ApprovalActionID is the action_id of a request's button for decision.
func ApprovalActionID(approvalID, decision string) string {
	return ApprovalActionPrefix + approvalID + ":" + decision
}

// ParseApprovalActionID splits an approval button's action_id into the
// request's id and the decision; ok is false for any other action_id.
func ParseApprovalActionID(actionID string) (approvalID, decision string, ok bool) {
	rest, found := strings.CutPrefix(actionID, ApprovalActionPrefix)
	if !found {
		return "", "", false
	}
	approvalID, decision, found = strings.Cut(rest, ":")
	if !found || approvalID == "" || (decision != ApprovalApprove && decision != ApprovalDeny) {
		return "", "", false
	}
	return approvalID, decision, true
}

// sections is text (mrkdwn, escaped already) as section blocks.
func sections(text string) []goslack.Block {
	var blocks []goslack.Block
	for _, part := range Split(text, sectionLimit) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		blocks = append(blocks, goslack.NewSectionBlock(goslack.NewTextBlockObject(goslack.MarkdownType, part, false, false), nil, nil))
	}
	return blocks
}

// ApprovalBlocks is a request for approval as Block Kit: its text (mrkdwn,
// escaped already: the server, the tool and the arguments) in sections and
// an actions block of two buttons, Approve (primary) and Deny (danger),
// whose action_ids name the request and the decision.
func ApprovalBlocks(text, approvalID string) []goslack.Block {
	approve := goslack.NewButtonBlockElement(ApprovalActionID(approvalID, ApprovalApprove), ApprovalApprove,
		goslack.NewTextBlockObject(goslack.PlainTextType, "Approve", false, false)).WithStyle(goslack.StylePrimary)
	deny := goslack.NewButtonBlockElement(ApprovalActionID(approvalID, ApprovalDeny), ApprovalDeny,
		goslack.NewTextBlockObject(goslack.PlainTextType, "Deny", false, false)).WithStyle(goslack.StyleDanger)
	return append(sections(text), goslack.NewActionBlock(ApprovalBlockPrefix+approvalID, approve, deny))
}

// DecidedBlocks is a request for approval once decided: its text and a
// context line saying who decided (mrkdwn, escaped already), with no
// buttons.
func DecidedBlocks(text, decided string) []goslack.Block {
	return append(sections(text), goslack.NewContextBlock("", goslack.NewTextBlockObject(goslack.MarkdownType, decided, false, false)))
}

// UpdateDecided rewrites a request for approval once decided
// (chat.update): its text (mrkdwn, escaped already) and the line saying
// who decided, as DecidedBlocks, its buttons gone.
func (c *Client) UpdateDecided(ctx context.Context, channel, ts, text, decided string) error {
	const op = "chat.update"
	if err := wait(ctx, c.streams.updates, op); err != nil {
		return err
	}
	_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts, goslack.MsgOptionText(text+"\n\n"+decided, false),
		goslack.MsgOptionBlocks(DecidedBlocks(text, decided)...))
	return translate(op, err)
}

// PostEphemeral shows text to user alone in channel (in the thread of
// threadTS when set): chat.postEphemeral.
func (c *Client) PostEphemeral(ctx context.Context, channel, threadTS, user, text string) error {
	const op = "chat.postEphemeral"
	opts := []goslack.MsgOption{goslack.MsgOptionText(text, false)}
	if threadTS != "" {
		opts = append(opts, goslack.MsgOptionTS(threadTS))
	}
	_, err := c.api.PostEphemeralContext(ctx, channel, user, opts...)
	return translate(op, err)
}
