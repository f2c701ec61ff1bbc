package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// Store is what the story reads of weft's database: the thread the
// conversation became. *db.Store implements it.
type Store interface {
	ThreadByLinearSession(ctx context.Context, sessionID string) (*thread.Thread, error)
	ThreadBySlackThread(ctx context.Context, teamID, channelID, threadTS string) (*thread.Thread, error)
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	Stitches(ctx context.Context, threadID uuid.UUID, p db.StitchPage) ([]thread.Stitch, error)
	ThreadOutbox(ctx context.Context, threadID uuid.UUID) ([]thread.Outbox, error)
}

// Outcome is what the story left behind, for whoever looks next.
type Outcome struct {
	ThreadID        uuid.UUID
	SessionID       string // the Linear agent session
	DiscordThreadID string
	// Asked reports that the agent asked back and waited for the answer
	// (a scripted model always does; a real one may answer at once).
	Asked bool
	// Approval is the Discord message that asked for approval of the
	// notes server's write_note, and Approved reports that the demo's
	// click on its Approve button was taken.
	Approval discordtest.SentMessage
	Approved bool
	// Notes are what the notes MCP server wrote, one per call.
	Notes []Note
	// SlackThreadID is the weft thread of the Slack conversation, in the
	// Slack thread SlackTS of the demo's channel.
	SlackThreadID uuid.UUID
	SlackTS       string
}

// Step timeouts: the scripted model answers at once, a real one may think.
const (
	startTimeout    = 2 * time.Minute // migrations on a fresh database
	scriptedTimeout = 30 * time.Second
	realTimeout     = 3 * time.Minute
	pollInterval    = 20 * time.Millisecond
	slowStart       = 3 * time.Second // when ready says it is waiting
)

// continueToken is the interaction token of the story's /continue.
const continueToken = "demo-continue"

// story is one playing of the story against a running weft.
type story struct {
	w       *World
	base    string
	store   Store
	p       *printer
	client  *http.Client
	timeout time.Duration
	out     Outcome

	// What has been printed: a count per feed.
	activities, interactions, sent, slackShown int
	// discordDone: weft's Discord messages hold their final text (an
	// answer streams into its message until delivered), so show prints
	// them.
	discordDone bool
}

// Play plays the story against weft serving at base (such as
// "http://127.0.0.1:8080") on these fakes, printing each step to out as it
// happens:
//
//  1. Ada mentions weft on a Linear issue; weft answers there with a
//     thought, an action (save_memory) and a response.
//  2. She runs /continue ENG-42 in Discord: weft opens a Discord thread on
//     the same weft thread, posts a summary and links it in Linear.
//  3. Her follow-up in the Discord thread is answered from the Linear part
//     of the conversation.
//  4. She asks weft to ship the fix; it asks back which environment, and
//     her answer is what it goes on with.
//  5. She asks for a release note: the agent calls write_note, a tool of
//     the demo's notes MCP server, which waits for a person's approval;
//     weft asks with Discord buttons, she clicks Approve, and the tool
//     runs once.
//  6. In Slack she mentions weft in a channel: it answers in the thread
//     (streamed into the message) from what it saved to memory in step 1,
//     and her follow-up there is answered with the thread's history.
//
// It returns when the last answer is posted, or with an error naming the
// step that did not happen.
func (w *World) Play(ctx context.Context, base string, store Store, out io.Writer) (*Outcome, error) {
	s := &story{w: w, base: base, store: store, p: &printer{out: out, now: time.Now},
		client: &http.Client{Timeout: 30 * time.Second}, timeout: scriptedTimeout}
	if w.Model == nil {
		s.timeout = realTimeout
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	w.Slack.DeliverTo(base + "/webhooks/slack")
	defer w.Slack.DeliverTo("")
	for _, step := range []func(context.Context) error{s.mention, s.continueInDiscord, s.followUp, s.askBack, s.approveTool, s.slack} {
		if err := step(ctx); err != nil {
			return &s.out, err
		}
	}
	if err := s.summary(ctx); err != nil {
		return &s.out, err
	}
	return &s.out, nil
}

// ready waits until weft answers and its Discord bot is on the gateway.
// A gateway shard still leased to a weft that was killed is free again
// once its lease lapses, which the demo says rather than sit silent.
func (s *story) ready(ctx context.Context) error {
	start, said := time.Now(), false
	return s.until(ctx, startTimeout, "weft did not start", func() (bool, error) {
		if !said && time.Since(start) > slowStart {
			s.p.note("waiting for weft to start (migrations, or a Discord shard a killed weft still holds)…")
			said = true
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := s.client.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && len(s.w.Discord.Identifies()) > 0, nil
	})
}

func (s *story) mention(ctx context.Context) error {
	s.p.header(1, "Linear: Ada mentions weft on an issue; it answers with thought → action → response")
	d, opts := s.w.signer.Created(lineartest.SessionOpts{
		IssueID: s.w.issueID, IssueIdentifier: issueKey, IssueTitle: issueTitle, IssueDescription: issueText,
		CommentBody: mention, CreatorName: adaName,
	})
	s.out.SessionID = opts.SessionID
	s.w.Linear.AddSession(opts.SessionID, s.w.issueID)
	s.p.line("Linear", "Ada", "comment", fmt.Sprintf("on %s “%s”: %s", issueKey, issueTitle, mention))
	if _, err := s.post(ctx, "/webhooks/linear", d.Body, d.Header); err != nil {
		return fmt.Errorf("linear mention: %w", err)
	}
	// A real model may ask back at once; that, too, ends the turn.
	if err := s.untilLinear(ctx, 0, "response", "elicitation"); err != nil {
		return err
	}
	th, err := s.store.ThreadByLinearSession(ctx, opts.SessionID)
	if err != nil {
		return fmt.Errorf("the mention's thread: %w", err)
	}
	s.out.ThreadID = th.ID
	return nil
}

func (s *story) continueInDiscord(ctx context.Context) error {
	s.p.header(2, "Discord: /continue "+issueKey+" moves the conversation to a Discord thread")
	body, err := freshInteraction(discordtest.ContinueInteraction(s.w.Discord.ApplicationID(), continueToken, guild, s.w.channel, ada, issueKey))
	if err != nil {
		return err
	}
	sig, ts := s.w.keys.Sign(body, time.Now())
	s.p.line("Discord", "Ada", "command", "/continue "+issueKey+" in #general")
	linearBefore := len(s.w.Linear.Activities(s.out.SessionID))
	raw, err := s.post(ctx, "/webhooks/discord", body, http.Header{
		"Content-Type": {"application/json"}, "X-Signature-Ed25519": {sig}, "X-Signature-Timestamp": {ts},
	})
	if err != nil {
		return fmt.Errorf("/continue: %w", err)
	}
	// Discord's interaction response type 5: deferred, the answer follows.
	var ack struct{ Type int }
	if err := json.Unmarshal(raw, &ack); err != nil || ack.Type != 5 {
		return fmt.Errorf("/continue: not deferred: %s", raw)
	}
	const link = "https://discord.com/channels/"
	err = s.until(ctx, s.timeout, "/continue was not answered", func() (bool, error) {
		msgs := s.w.Discord.InteractionMessages(continueToken)
		if len(msgs) == 0 {
			return false, nil
		}
		i := strings.Index(msgs[0].Content, link)
		if i < 0 {
			return false, fmt.Errorf("/continue answered %q", msgs[0].Content)
		}
		url := strings.Fields(msgs[0].Content[i:])[0]
		s.out.DiscordThreadID = url[strings.LastIndex(url, "/")+1:]
		return true, nil
	})
	if err != nil {
		return err
	}
	if err := s.untilDiscord(ctx, 1); err != nil {
		return err
	}
	return s.untilLinear(ctx, linearBefore, "response")
}

func (s *story) followUp(ctx context.Context) error {
	s.p.header(3, "Discord: a follow-up in the new thread, answered with the Linear history")
	return s.say(ctx, askSoFar)
}

func (s *story) askBack(ctx context.Context) error {
	s.p.header(4, "Discord: weft asks back before it acts, and Ada answers")
	if err := s.say(ctx, askShip); err != nil {
		return err
	}
	th, err := s.store.Thread(ctx, s.out.ThreadID)
	if err != nil {
		return err
	}
	s.out.Asked = th.Status == thread.StatusWaiting && th.WaitingReason == thread.WaitingClarification
	if !s.out.Asked {
		s.p.note("(the model answered without the ask_user tool; Ada answers anyway)")
	} else {
		s.p.note("weft waits for the answer: the thread is waiting on a clarification")
	}
	return s.say(ctx, answerEnv)
}

func (s *story) approveTool(ctx context.Context) error {
	s.p.header(5, "Discord: weft writes a release note with an MCP tool, once Ada approves it with a button")
	n := len(s.w.Discord.Sent(s.out.DiscordThreadID))
	if err := s.say(ctx, askNote); err != nil {
		return err
	}
	th, err := s.store.Thread(ctx, s.out.ThreadID)
	if err != nil {
		return err
	}
	if th.Status != thread.StatusWaiting || th.WaitingReason != thread.WaitingApproval {
		if s.w.Model == nil { // a real model may answer without the tool
			s.p.note("(the model did not call write_note, so there is nothing to approve)")
			return nil
		}
		return fmt.Errorf("weft did not ask for approval of %s (the thread is %s, %s)", notesToolName, th.Status, th.WaitingReason)
	}
	s.p.note("weft waits for a person's approval: write_note does not say it is read-only")
	ask := s.w.Discord.Sent(s.out.DiscordThreadID)[n]
	approve := slices.IndexFunc(ask.Buttons, func(b discordtest.Button) bool { return b.Label == "Approve" })
	if approve < 0 {
		return fmt.Errorf("weft's approval request has no Approve button: %+v", ask)
	}
	s.out.Approval = ask
	body := discordtest.ButtonInteraction(s.w.Discord.ApplicationID(), snowflake(), "demo-approve-"+snowflake(), guild,
		s.out.DiscordThreadID, ada, ask.ID, ask.Content, ask.Buttons[approve].CustomID)
	sig, ts := s.w.keys.Sign(body, time.Now())
	s.p.line("Discord", "Ada", "click", "Approve")
	raw, err := s.post(ctx, "/webhooks/discord", body, http.Header{
		"Content-Type": {"application/json"}, "X-Signature-Ed25519": {sig}, "X-Signature-Timestamp": {ts},
	})
	if err != nil {
		return fmt.Errorf("approve: %w", err)
	}
	// Discord's interaction response type 7: the message is updated.
	var ack struct {
		Type int
		Data struct{ Content string }
	}
	if err := json.Unmarshal(raw, &ack); err != nil || ack.Type != 7 {
		return fmt.Errorf("approve: the request was not updated: %s", raw)
	}
	s.out.Approved = true
	// The request's message, updated to say who decided (its last line).
	lines := strings.Split(strings.TrimSpace(ack.Data.Content), "\n")
	s.p.line("Discord", "weft", "update", "the request now ends: "+lines[len(lines)-1])
	if err := s.untilDiscord(ctx, n+2); err != nil {
		return err
	}
	if s.out.Notes, err = ReadNotes(s.w.NotesFile); err != nil {
		return err
	}
	s.p.note(fmt.Sprintf("the notes server's file holds %d note(s), one per call:", len(s.out.Notes)))
	for _, note := range s.out.Notes {
		s.p.note(fmt.Sprintf("   %q: %s", note.Title, note.Text))
	}
	return nil
}

func (s *story) slack(ctx context.Context) error {
	s.p.header(6, "Slack: Ada mentions weft in #eng; it answers in the thread, and a follow-up there gets the history")
	q := s.w.Slack.Post(slackAda, slackChannel, "", "<@"+slacktest.BotUserID+"> "+askSlack)
	s.out.SlackTS = q.TS
	s.p.line("Slack", "Ada", "message", "@weft "+askSlack+" (in #eng)")
	if err := s.untilSlack(ctx, 1); err != nil {
		return err
	}
	var appends int
	for _, c := range s.w.Slack.Calls("chat.appendStream") {
		if c.Form.Get("channel") == slackChannel {
			appends++
		}
	}
	if len(s.w.Slack.Calls("chat.startStream")) > 0 {
		s.p.note(fmt.Sprintf("streamed into the message as the model wrote: chat.startStream, %d× chat.appendStream, chat.stopStream", appends))
	}
	s.w.Slack.Post(slackAda, slackChannel, q.TS, askSlackAgain)
	s.p.line("Slack", "Ada", "reply", askSlackAgain)
	return s.untilSlack(ctx, 2)
}

// slackAnswers are weft's finished messages in the Slack thread: each an
// outbox row's (its weft_outbox metadata comes with the delivery, which
// also ends a streamed message).
func (s *story) slackAnswers() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range s.w.Slack.BotMessages(slackChannel) {
		if m.ThreadTS == s.out.SlackTS && m.TS != s.out.SlackTS && m.Metadata != nil && !m.Streaming {
			out = append(out, m)
		}
	}
	return out
}

// untilSlack waits until weft posted n finished messages in the Slack
// thread and is done with it, and prints those new since the last call.
func (s *story) untilSlack(ctx context.Context, n int) error {
	err := s.until(ctx, s.timeout, "Slack never showed weft's answer", func() (bool, error) {
		if len(s.slackAnswers()) < n {
			return false, nil
		}
		if s.out.SlackThreadID == uuid.Nil {
			th, err := s.store.ThreadBySlackThread(ctx, slacktest.TeamID, slackChannel, s.out.SlackTS)
			if err != nil {
				return false, fmt.Errorf("the Slack mention's thread: %w", err)
			}
			s.out.SlackThreadID = th.ID
		}
		return s.settled(ctx, s.out.SlackThreadID)
	})
	if err != nil {
		return err
	}
	answers := s.slackAnswers()
	for _, m := range answers[s.slackShown:] {
		s.p.line("Slack", "weft", "reply", m.Text)
	}
	s.slackShown = len(answers)
	return nil
}

// say posts Ada's message in the Discord thread, as the gateway delivers
// it, and waits for weft's answer there.
func (s *story) say(ctx context.Context, text string) error {
	n := len(s.w.Discord.Sent(s.out.DiscordThreadID))
	s.w.Discord.PostUserMessage(s.out.DiscordThreadID, ada, text)
	s.p.line("Discord", "Ada", "message", text)
	return s.untilDiscord(ctx, n+1)
}

// summary prints the weft thread the conversation became.
func (s *story) summary(ctx context.Context) error {
	chain, err := s.store.Stitches(ctx, s.out.ThreadID, db.StitchPage{})
	if err != nil {
		return fmt.Errorf("read the thread: %w", err)
	}
	fmt.Fprintf(s.p.out, "\nSteps 1 to 5 are one weft thread, %s, attached to Linear %s and Discord thread %s; its %d stitches:\n",
		s.out.ThreadID, issueKey, s.out.DiscordThreadID, len(chain))
	for _, st := range chain {
		fmt.Fprintf(s.p.out, "   %3d  %-22s %-8s %s\n", st.Seq, st.Type, st.Source, oneLine(stitchText(st), 90))
	}
	if s.out.SlackThreadID != uuid.Nil {
		slackChain, err := s.store.Stitches(ctx, s.out.SlackThreadID, db.StitchPage{})
		if err != nil {
			return fmt.Errorf("read the Slack thread: %w", err)
		}
		fmt.Fprintf(s.p.out, "\nStep 6, in Slack, is weft thread %s, attached to Slack thread %s in #eng, of %d stitches.\n",
			s.out.SlackThreadID, s.out.SlackTS, len(slackChain))
	}
	return nil
}

// stitchText is what one line of the summary says about a stitch.
func stitchText(st thread.Stitch) string {
	switch st.Type {
	case thread.StitchSystemPrompt:
		return fmt.Sprintf("(%d characters)", len(st.Content))
	case thread.StitchLLMCall:
		text := st.Content
		if text == "" {
			text = "(tool calls)"
		}
		return fmt.Sprintf("%s, %d→%d tokens: %s", st.Model, st.InputTokens, st.OutputTokens, text)
	case thread.StitchToolCall:
		return st.ToolName + " → " + st.Content
	}
	if st.Author != nil && st.Author.Name != "" {
		return st.Author.Name + ": " + st.Content
	}
	return st.Content
}

// untilLinear waits for an activity of one of the kinds in want in the
// session after its first from activities, printing each as it arrives. An
// error activity ends the story.
func (s *story) untilLinear(ctx context.Context, from int, want ...string) error {
	return s.until(ctx, s.timeout, "Linear never showed a "+strings.Join(want, " or "), func() (bool, error) {
		for _, a := range s.w.Linear.Activities(s.out.SessionID)[from:] {
			if a.Type == "error" {
				return false, fmt.Errorf("weft answered in Linear with an error: %s", a.Body)
			}
			if slices.Contains(want, a.Type) {
				return true, nil
			}
		}
		return false, nil
	})
}

// untilDiscord waits until the bot posted n messages in the Discord thread
// and they hold their final text.
func (s *story) untilDiscord(ctx context.Context, n int) error {
	s.discordDone = false
	return s.until(ctx, s.timeout, "Discord never showed weft's answer", func() (bool, error) {
		if len(s.w.Discord.Sent(s.out.DiscordThreadID)) < n {
			return false, nil
		}
		done, err := s.settled(ctx, s.out.ThreadID)
		s.discordDone = done
		return done, err
	})
}

// settled reports that weft is done with a thread for now: no turn runs
// and every post is out, so an answer streamed into a message holds its
// final text.
func (s *story) settled(ctx context.Context, id uuid.UUID) (bool, error) {
	th, err := s.store.Thread(ctx, id)
	if err != nil {
		return false, fmt.Errorf("read the thread: %w", err)
	}
	if th.Status == thread.StatusRunning || th.LeaseOwner != "" {
		return false, nil
	}
	rows, err := s.store.ThreadOutbox(ctx, id)
	if err != nil {
		return false, fmt.Errorf("read the thread's posts: %w", err)
	}
	for _, o := range rows {
		if !o.Status.Final() {
			return false, nil
		}
	}
	return true, nil
}

// until polls the fakes, printing what is new on them, until done says so
// or fails, or timeout passes.
func (s *story) until(ctx context.Context, timeout time.Duration, what string, done func() (bool, error)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		s.show()
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			s.show()
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline.C:
			return fmt.Errorf("%s within %s", what, timeout)
		case <-tick.C:
		}
	}
}

// show prints what weft posted since the last call.
func (s *story) show() {
	if s.out.SessionID != "" {
		acts := s.w.Linear.Activities(s.out.SessionID)
		for _, a := range acts[s.activities:] {
			s.p.line("Linear", "weft", a.Type, activityText(a))
		}
		s.activities = len(acts)
	}
	msgs := s.w.Discord.InteractionMessages(continueToken)
	for _, m := range msgs[s.interactions:] {
		s.p.line("Discord", "weft", "reply", m.Content)
	}
	s.interactions = len(msgs)
	if s.out.DiscordThreadID != "" && s.discordDone {
		sent := s.w.Discord.Sent(s.out.DiscordThreadID)
		for _, m := range sent[s.sent:] {
			s.p.line("Discord", "weft", "message", messageText(m))
		}
		s.sent = len(sent)
	}
}

// messageText is a Discord message as its channel shows it: its text,
// then its buttons.
func messageText(m discordtest.SentMessage) string {
	if len(m.Buttons) == 0 {
		return m.Content
	}
	labels := make([]string, len(m.Buttons))
	for i, b := range m.Buttons {
		labels[i] = b.Label
	}
	return fmt.Sprintf("%s [%s]", m.Content, strings.Join(labels, " | "))
}

// activityText is a Linear activity as its timeline shows it.
func activityText(a lineartest.Activity) string {
	switch a.Type {
	case "action":
		text := a.Action + " " + a.Parameter
		if a.Result != "" {
			text += " → " + a.Result
		}
		return text
	case "elicitation":
		if len(a.Options) > 0 {
			return fmt.Sprintf("%s [%s]", a.Body, strings.Join(a.Options, " | "))
		}
	}
	return a.Body
}

// freshInteraction gives an interaction body an id of its own: weft's
// ledger takes each interaction once, and the database outlives the fake
// that numbers them.
func freshInteraction(body []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("interaction: %w", err)
	}
	v["id"] = snowflake()
	return json.Marshal(v)
}

// snowflake is a Discord id for now, unique within the millisecond.
func snowflake() string {
	var low [2]byte
	_, _ = rand.Read(low[:]) // never fails (crypto/rand)
	ms := uint64(time.Now().UnixMilli() - discordEpochMillis)
	return strconv.FormatUint(ms<<22|uint64(low[0])<<8|uint64(low[1]), 10)
}

// discordEpochMillis is the Unix time in milliseconds of snowflake zero.
const discordEpochMillis = 1420070400000

// post sends a signed delivery to one of weft's doors and returns the
// answer's body; anything but a 200 is an error.
func (s *story) post(ctx context.Context, path string, body []byte, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(raw))
	}
	return raw, nil
}
