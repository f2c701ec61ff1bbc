package dbtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/weft-dev/weft/internal/thread"
)

// ThreadOpts shapes a factory-made thread. Nil fields take defaults: an
// autonomous thread with goal "test goal".
type ThreadOpts struct {
	Goal    *string
	Discord *thread.DiscordAttachment
	Linear  *thread.LinearAttachment
	Slack   *thread.SlackAttachment
}

// Creator is what the factories write through: a *db.Store or *db.Tx.
type Creator interface {
	thread.Creator
}

// Thread makes a thread through the real ThreadBuilder and insert path, so a
// schema change breaks factories first.
func Thread(ctx context.Context, t testing.TB, c Creator, opts *ThreadOpts) *thread.Thread {
	t.Helper()
	if opts == nil {
		opts = &ThreadOpts{}
	}
	goal := "test goal"
	if opts.Goal != nil {
		goal = *opts.Goal
	}
	b := thread.NewBuilder(nil).WithGoal(goal).Autonomous()
	if opts.Discord != nil {
		b.InteractiveDiscord(opts.Discord)
	}
	if opts.Linear != nil {
		b.InteractiveLinear(opts.Linear)
	}
	if opts.Slack != nil {
		b.InteractiveSlack(opts.Slack)
	}
	th, err := b.Build(ctx, c)
	if err != nil {
		t.Fatalf("dbtest: build thread: %v", err)
	}
	return th
}

// Snowflake returns a random Discord-shaped id (18 digits).
func Snowflake() string {
	return strconv.FormatUint(100000000000000000+rand.Uint64N(800000000000000000), 10)
}

// DiscordAttachment returns a valid attachment with fresh ids.
func DiscordAttachment() *thread.DiscordAttachment {
	return &thread.DiscordAttachment{
		DiscordThreadID: Snowflake(), ChannelID: Snowflake(), GuildID: Snowflake(),
		CreatedBy: "alice", ThreadName: "a test thread",
	}
}

// LinearAttachment returns a valid attachment with a fresh session id.
func LinearAttachment() *thread.LinearAttachment {
	n := rand.Uint32()
	return &thread.LinearAttachment{
		SessionID: fmt.Sprintf("session-%d", n), WorkspaceID: "org-1", IssueID: fmt.Sprintf("issue-%d", n),
		IssueIdentifier: fmt.Sprintf("ENG-%d", n), IssueTitle: "Fix the flaky test", CreatedByUserID: "user-1",
	}
}
