package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/tracing"
)

// DefaultMaxSteps bounds the model calls one turn makes before it gives up:
// a model that keeps calling tools is a runaway, not progress.
const DefaultMaxSteps = 20

// maxActionText keeps an action's parameter and result readable on a
// platform; the full text stays in the stitch.
const maxActionText = 500

// ContextProvider adds sections to a model call's system prompt: what the
// agent should know that the chain does not hold, such as the platform
// thread's history. A provider that fails logs and returns nothing: context
// is a help, never a reason to fail a turn.
type ContextProvider interface {
	PromptSections(ctx context.Context, th *thread.Thread, chain []thread.Stitch) []string
}

// Runner runs turns.
type Runner struct {
	LLM      llm.Provider
	Model    string
	Tools    *tools.Registry // nil: no tools beyond the control tools
	Context  []ContextProvider
	MaxSteps int // 0: DefaultMaxSteps
	Logger   *slog.Logger
	// Metrics counts model and tool calls; nil counts nothing.
	Metrics *metrics.Metrics
	// Tracer traces model and tool calls; nil traces nothing.
	Tracer trace.TracerProvider
	// RetryWindow is how long a turn retries an unavailable model (see
	// [Unavailable]) before the thread fails; 0 means DefaultRetryWindow.
	RetryWindow time.Duration
	// Now is the clock the retry window is measured by; nil is time.Now.
	Now func() time.Time
	// Approvals decides requests for approval from people's replies; nil
	// leaves a reply's decision to the console and the API.
	Approvals ApprovalDecider
	// ApprovalTimeout is how long a call waits for a person's approval
	// before it is denied; 0 means DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// Partials, when set, receives answers as the model writes them (the
	// calls stream); nil makes plain calls.
	Partials Partials
	// Files reads the files people attached to their messages (see
	// internal/attachment); nil leaves them out.
	Files Files
	// Models gives the provider an organisation's model names (see
	// WithOrg), built from the environment's credentials for it; nil runs
	// every organisation on LLM and Model.
	Models func(provider string) (llm.Provider, error)
}

// Files reads a message's files for the model: text that follows the
// message's own and the images to send with it. *attachment.Fetcher is one.
type Files interface {
	Expand(ctx context.Context, s *thread.Stitch) (string, []llm.Image)
}

// Turn works the thread until nothing is left to answer: it calls the model,
// runs the tools it asks for, and records each step through store. chain is
// the thread's chain as the caller just read it; each step plans from the
// chain Record returns, which holds any input that arrived meanwhile. It
// returns nil when the turn ended normally, including by recording a
// failure; an error means a step could not be recorded and the turn should
// be retried (ctx's cause when the turn was cancelled), or an
// [*Unavailable] when the model is unavailable for now.
func (r *Runner) Turn(ctx context.Context, th *thread.Thread, store Store, chain []thread.Stitch) error {
	maxSteps := r.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		p := nextStep(chain)
		var (
			e      thread.Effects
			last   bool
			err    error
			answer *partial // closed once the step is recorded
		)
		switch p.kind {
		case stepDone:
			return nil
		case stepDecide:
			if chain, e, err = r.decide(ctx, th, store, chain, p); err != nil {
				return err
			}
			if e.Status == nil {
				continue // decided: the chain now holds the decision
			}
			last = true
		case stepRunTools:
			if e, chain, last, err = r.runTools(ctx, th, store, chain, p.calls); err != nil {
				return err
			}
		case stepCallLLM:
			if p.stepsSinceInput >= maxSteps {
				e = failure(th, chain, fmt.Sprintf("Stopped after %d model calls in one turn without an answer.", maxSteps), false)
			} else {
				answer = r.openPartial(ctx, th, chain)
				if e, err = r.callLLM(ctx, th, chain, answer); err != nil {
					// The call failed: no stitch will hold its text.
					answer.close()
					var un *Unavailable
					if errors.As(err, &un) && len(e.Stitches) > 0 {
						// The notice of a new outage goes out before the
						// turn gives its worker up.
						if _, rerr := store.Record(ctx, th.ID, chain, e, false); rerr != nil {
							return fmt.Errorf("record step: %w", rerr)
						}
					}
					return err
				}
			}
			// A step that settles the thread's status answers the input.
			last = e.Status != nil
		}
		chain, err = store.Record(ctx, th.ID, chain, e, last)
		answer.close()
		if err != nil {
			return fmt.Errorf("record step: %w", err)
		}
	}
}

// callLLM makes one model call and returns its effects. A failure retrying
// may fix returns an [*Unavailable] (see [Runner.unavailable]), a cancelled
// turn ctx's cause; any other failure becomes an error stitch.
func (r *Runner) callLLM(ctx context.Context, th *thread.Thread, chain []thread.Stitch, answer *partial) (thread.Effects, error) {
	var files func(*thread.Stitch) (string, []llm.Image)
	if r.Files != nil {
		files = func(s *thread.Stitch) (string, []llm.Image) { return r.Files.Expand(ctx, s) }
	}
	system, msgs := conversation(chain, files)
	for _, p := range r.Context {
		for _, sec := range p.PromptSections(ctx, th, chain) {
			system += "\n\n" + sec
		}
	}
	provider, model, err := r.model(ctx)
	if err != nil {
		// The operator's to fix: a conversation waits for its next message.
		r.Logger.ErrorContext(ctx, "organisation's model", slog.String("thread_id", th.ID.String()), slog.Any("error", err))
		return failure(th, chain, "This conversation's model cannot be used now: "+err.Error(), false), nil
	}
	req := llm.Request{Model: model, System: system, Messages: msgs, Tools: r.specs(ctx, th), OnDelta: answer.onDelta()}
	start := time.Now()
	spanCtx, span := tracing.Child(ctx, tracing.Tracer(r.Tracer), "model "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.system", provider.Name()), attribute.String("gen_ai.request.model", model)))
	resp, err := provider.Complete(spanCtx, req)
	latency := time.Since(start)
	var usage llm.Usage
	if resp != nil {
		usage = resp.Usage
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", usage.InputTokens), attribute.Int("gen_ai.usage.output_tokens", usage.OutputTokens))
	}
	tracing.End(span, err)
	span.End()
	r.Metrics.ModelCall(provider.Name(), model, metrics.Outcome(ctx, err), latency, usage.InputTokens, usage.OutputTokens)
	if err != nil {
		if ctx.Err() != nil {
			return thread.Effects{}, context.Cause(ctx)
		}
		r.Logger.WarnContext(ctx, "llm call failed", slog.String("thread_id", th.ID.String()), slog.Any("error", err))
		if llm.IsRetryable(err) {
			return r.unavailable(th, chain, err)
		}
		return failure(th, chain, failedCall(err), true), nil
	}

	through := chain[len(chain)-1].Seq
	toolNames := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		toolNames[i] = t.Name
	}
	call := thread.Stitch{
		Type:         thread.StitchLLMCall,
		Content:      resp.Content,
		LLMRequest:   mustJSON(recordedRequest{Model: model, System: system, Messages: msgs, Tools: toolNames}),
		LLMResponse:  mustJSON(recordedResponse{Content: resp.Content, ToolCalls: resp.ToolCalls, StopReason: resp.StopReason}),
		Model:        resp.Model,
		InputTokens:  resp.Usage.InputTokens,
		OutputTokens: resp.Usage.OutputTokens,
		Latency:      latency,
		Metadata:     thread.Meta{AnsweredThrough: through}.JSON(),
	}
	if call.Model == "" {
		call.Model = model
	}
	e := thread.Effects{Stitches: []thread.Stitch{call}}

	if len(resp.ToolCalls) > 0 {
		// Text beside tool calls is the model thinking aloud.
		if resp.Content != "" {
			e.Stitches = append(e.Stitches, thread.Stitch{Type: thread.StitchAgentThought, Content: resp.Content})
			e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxThought, OutboxBody: thread.OutboxBody{Text: resp.Content}, Stitch: 1})
		}
		return e, nil
	}
	e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxResponse, OutboxBody: thread.OutboxBody{Text: resp.Content}})
	if th.Type == thread.TypeAutonomous {
		e.Stitches = append(e.Stitches, thread.Stitch{Type: thread.StitchThreadResult, Content: resp.Content})
		e.Status = &thread.StatusChange{To: thread.StatusCompleted, Result: mustJSON(completeArgs{Result: resp.Content})}
	} else {
		e.Status = &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}
	}
	return e, nil
}

// runTools runs the model's pending calls in order. done reports that a
// control tool ended the turn, that a call waits for a person's approval,
// or that the model kept making the same failing call (see
// maxRepeatedFailures). A call with side effects has its intent recorded
// (with the step so far) before it is made, so chain may have grown; err is
// a failure to record it.
func (r *Runner) runTools(ctx context.Context, th *thread.Thread, store Store, chain []thread.Stitch, calls []llm.ToolCall) (e thread.Effects, _ []thread.Stitch, done bool, err error) {
	states := callStates(sinceLastCall(chain))
	for _, c := range calls {
		meta := thread.Meta{ToolCallID: c.ID}
		var (
			out    string
			failed bool
		)
		switch c.Name {
		case toolAskUser:
			var args askUserArgs
			err := json.Unmarshal(c.Arguments, &args)
			if err == nil && args.Question != "" {
				e.Stitches = append(e.Stitches, thread.Stitch{Type: thread.StitchClarificationRequest, Content: args.Question,
					ToolName: c.Name, ToolInput: c.Arguments, Metadata: meta.JSON()})
				e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxElicitation,
					OutboxBody: thread.OutboxBody{Text: args.Question, Options: args.Options}, Stitch: len(e.Stitches) - 1})
				e.Status = &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingClarification}
				return e, chain, true, nil
			}
			out, failed = badArguments(c, err, `a non-empty "question"`), true
		case toolCompleteThread:
			var args completeArgs
			err := json.Unmarshal(c.Arguments, &args)
			if err == nil && th.Type == thread.TypeAutonomous {
				e.Stitches = append(e.Stitches, thread.Stitch{Type: thread.StitchThreadResult, Content: args.Result,
					ToolName: c.Name, ToolInput: c.Arguments, Metadata: meta.JSON()})
				e.Status = &thread.StatusChange{To: thread.StatusCompleted, Result: mustJSON(args)}
				return e, chain, true, nil
			}
			if th.Type == thread.TypeAutonomous {
				out, failed = badArguments(c, err, `a "result"`), true
			}
		}
		if out == "" {
			tool, ok := r.tool(ctx, c.Name)
			st := states[c.ID]
			switch {
			case st.intent:
				// Its intent is recorded and its result is not: weft
				// stopped while it ran, and it is never made again, even
				// when its server is not (yet) listed by this replica.
				out, failed, meta.Unknown = UnknownOutcome, true, true
			case !ok:
				// A name the model made up is no label: it is counted as one.
				r.Metrics.ToolCall(unknownTool, metrics.Error, 0)
				out, failed = fmt.Sprintf("error: no tool named %q", c.Name), true
			case tool.NeedsApproval && st.asked == nil:
				r.askApproval(th, c, tool, &e)
				return e, chain, true, nil
			case tool.NeedsApproval && st.decision.Meta().Decision != thread.Approve:
				out, failed = "error: this call was not made: "+st.decision.Content, true
			}
			if out == "" && (tool.SideEffects || tool.NeedsApproval) {
				intent := thread.Stitch{Type: thread.StitchToolCall, Content: "calling " + c.Name, ToolName: c.Name,
					ToolInput: c.Arguments, Metadata: thread.Meta{IntentOf: c.ID}.JSON()}
				e.Stitches = append(e.Stitches, intent)
				if chain, err = store.Record(ctx, th.ID, chain, e, false); err != nil {
					return thread.Effects{}, chain, false, fmt.Errorf("record intent: %w", err)
				}
				e = thread.Effects{}
			}
			if out == "" {
				out, failed, meta.Images = r.runTool(ctx, th, tool, c)
			}
		}
		output, _ := json.Marshal(out)
		repeats := 0
		if failed {
			repeats = repeatedFailures(chain, e.Stitches, c.Name, out)
		}
		e.Stitches = append(e.Stitches, thread.Stitch{Type: thread.StitchToolCall, Content: out, ToolName: c.Name,
			ToolInput: c.Arguments, ToolOutput: output, ToolError: failed, Metadata: meta.JSON()})
		if repeats == 0 {
			// The same failure again is folded into the action already posted.
			e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxAction,
				OutboxBody: thread.OutboxBody{Action: c.Name, Parameter: clip(string(c.Arguments)), Result: clip(out)}, Stitch: len(e.Stitches) - 1})
		}
		if repeats+1 >= maxRepeatedFailures {
			msg := fmt.Sprintf("The model made the same failing %s call %d times in a row, so the turn was stopped: %s",
				c.Name, repeats+1, strings.TrimPrefix(out, "error: "))
			f := failure(th, chain, msg, true)
			e.Stitches = append(e.Stitches, f.Stitches...)
			e.Outputs = append(e.Outputs, thread.Output{Kind: thread.OutboxError, OutboxBody: thread.OutboxBody{Text: msg}, Stitch: len(e.Stitches) - 1})
			e.Status = f.Status
			return e, chain, true, nil
		}
	}
	return e, chain, false, nil
}

// UnknownOutcome is the result the model gets for a call with side effects
// that was made but whose result was never recorded: weft stopped while it
// ran, and does not make it again.
const UnknownOutcome = "error: the outcome of this call is unknown: weft stopped while it ran. " +
	"It was not made again; check whether it took effect before trying it again."

// sinceLastCall is the chain after its newest llm_call.
func sinceLastCall(chain []thread.Stitch) []thread.Stitch {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Type == thread.StitchLLMCall {
			return chain[i+1:]
		}
	}
	return nil
}

// tool finds a registry tool offered to the organisation of the turn run
// with ctx (see WithOrg).
func (r *Runner) tool(ctx context.Context, name string) (tools.Tool, bool) {
	if r.Tools == nil {
		return tools.Tool{}, false
	}
	t, ok := r.Tools.Get(name)
	if !ok || !t.OfferedTo(OrgOf(ctx).Organisation) {
		return tools.Tool{}, false
	}
	return t, true
}

// maxRepeatedFailures is how many times in a row a turn lets the model make
// the same call that fails the same way before it fails the turn: a model
// repeating a mistake it was told about is stuck, and each try would post
// another action.
const maxRepeatedFailures = 3

// repeatedFailures counts the tool calls just before this one, since the
// newest input (in chain, then in this step's stitches), that failed as
// this one did: same tool, same error.
func repeatedFailures(chain, step []thread.Stitch, name, out string) int {
	n := 0
	same := func(s *thread.Stitch) (counted, stop bool) {
		switch {
		case s.Type.IsInput():
			return false, true
		case s.Type != thread.StitchToolCall || s.Meta().IntentOf != "":
			return false, false
		case s.ToolError && s.ToolName == name && s.Content == out:
			return true, false
		}
		return false, true
	}
	for _, stitches := range [][]thread.Stitch{step, chain} {
		for i := len(stitches) - 1; i >= 0; i-- {
			counted, stop := same(&stitches[i])
			if stop {
				return n
			}
			if counted {
				n++
			}
		}
	}
	return n
}

// badArguments is the tool error for a control tool's arguments the turn
// cannot use: what was wrong, and what the tool needs, so the model can
// correct the call. Arguments that were not JSON at all reach the turn as a
// JSON string (see llm.ToolCall).
func badArguments(c llm.ToolCall, err error, needs string) string {
	var raw string
	switch {
	case json.Unmarshal(c.Arguments, &raw) == nil:
		return fmt.Sprintf("error: the arguments of %s are not valid JSON: %s; send a JSON object with %s", c.Name, clip(raw), needs)
	case err != nil:
		return fmt.Sprintf("error: the arguments of %s are not the JSON object it takes (%v); send one with %s", c.Name, err, needs)
	}
	return fmt.Sprintf("error: the arguments of %s lack %s", c.Name, needs)
}

// runTool runs one registry tool: its result, whether it failed, and the
// pictures its result carries. Its failure is the model's to handle: the
// error text is the result.
func (r *Runner) runTool(ctx context.Context, th *thread.Thread, tool tools.Tool, c llm.ToolCall) (string, bool, []thread.Image) {
	start := time.Now()
	spanCtx, span := tracing.Child(ctx, tracing.Tracer(r.Tracer), "tool "+tool.Name, trace.WithAttributes(attribute.String("gen_ai.tool.name", tool.Name)))
	var images []thread.Image
	out, err := callSafely(spanCtx, tool, tools.Call{ThreadID: th.ID, AgentName: th.AgentName, Arguments: c.Arguments,
		Attach: func(img thread.Image) { images = append(images, img) }})
	tracing.End(span, err)
	span.End()
	r.Metrics.ToolCall(tool.Name, metrics.Outcome(ctx, err), time.Since(start))
	if err != nil {
		return "error: " + err.Error(), true, nil
	}
	return out, false, images
}

// CallTool makes one call of a registered tool the way a step makes it
// (the registry's lookup, the span, the metrics, the panic guard) without
// recording anything: the tools benchmark measures weft's part of an MCP
// call through it. A name the registry does not hold is a tool error.
func (r *Runner) CallTool(ctx context.Context, th *thread.Thread, c llm.ToolCall) (string, bool) {
	tool, ok := r.tool(ctx, c.Name)
	if !ok {
		return fmt.Sprintf("error: no tool named %q", c.Name), true
	}
	out, failed, _ := r.runTool(ctx, th, tool, c)
	return out, failed
}

// unknownTool labels calls of tools that do not exist.
const unknownTool = "unknown"

// callSafely keeps a panicking tool from taking the worker down with it.
func callSafely(ctx context.Context, t tools.Tool, c tools.Call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", t.Name, p)
		}
	}()
	return t.Handler(ctx, c)
}

// specs lists the tools offered to the model on this thread, in the
// organisation of the turn run with ctx.
func (r *Runner) specs(ctx context.Context, th *thread.Thread) []llm.ToolSpec {
	org := OrgOf(ctx).Organisation
	var out []llm.ToolSpec
	for _, c := range controlTools {
		if c.autonomousOnly && th.Type != thread.TypeAutonomous {
			continue
		}
		out = append(out, llm.ToolSpec{Name: c.name, Description: c.description, Parameters: c.schema})
	}
	if r.Tools != nil {
		for _, t := range r.Tools.All() {
			if !t.OfferedTo(org) {
				continue
			}
			out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Schema})
		}
	}
	return out
}

// failure records a turn that could not answer: an error stitch that marks
// the input as dealt with (so the turn does not retry forever), the error on
// the surface, and the thread failed (or, for a runaway loop in a
// conversation, waiting for the user's next message).
func failure(th *thread.Thread, chain []thread.Stitch, msg string, fail bool) thread.Effects {
	e := thread.Effects{
		Stitches: []thread.Stitch{{Type: thread.StitchError, Content: msg,
			Metadata: thread.Meta{AnsweredThrough: chain[len(chain)-1].Seq}.JSON()}},
		Outputs: []thread.Output{{Kind: thread.OutboxError, OutboxBody: thread.OutboxBody{Text: msg}}},
	}
	if fail || th.Type == thread.TypeAutonomous {
		e.Status = &thread.StatusChange{To: thread.StatusFailed, Error: msg}
	} else {
		e.Status = &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingIdle}
	}
	return e
}

func clip(s string) string {
	if r := []rune(s); len(r) > maxActionText {
		return string(r[:maxActionText-1]) + "…"
	}
	return s
}
