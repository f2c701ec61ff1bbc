package slack_test

import (
	"testing"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// TestUserName: a person is called by name, asked of users.info once;
// anyone users.info cannot tell about keeps their id.
func TestUserName(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddUser(slacktest.User{ID: "U0ADA", Name: "ada"})
	c, _ := newClient(t, srv, slacktest.BotToken)
	for range 2 {
		if got := c.UserName(t.Context(), "U0ADA"); got != "ada" {
			t.Fatalf("UserName(U0ADA) = %q, want ada", got)
		}
	}
	if n := len(srv.Calls("users.info")); n != 1 {
		t.Fatalf("users.info called %d times, want once", n)
	}
	if got := c.UserName(t.Context(), "U0NOBODY"); got != "U0NOBODY" {
		t.Fatalf("UserName(U0NOBODY) = %q, want the id", got)
	}
	srv.AddUser(slacktest.User{ID: "U0BOB", Name: "bob"})
	srv.Fail("users.info", 1, fakekit.ErrorCode("ratelimited"))
	if got := c.UserName(t.Context(), "U0BOB"); got != "U0BOB" {
		t.Fatalf("UserName(U0BOB) with users.info failing = %q, want the id", got)
	}
}
