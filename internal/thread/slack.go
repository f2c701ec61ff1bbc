package thread

import "strings"

// SlackChannelType guesses a conversation's type from its id's prefix, for
// events (app_mention) and commands that do not say.
func SlackChannelType(id string) string {
	switch {
	case strings.HasPrefix(id, "D"):
		return "im"
	case strings.HasPrefix(id, "G"):
		return "group"
	}
	return "channel"
}
