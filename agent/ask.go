package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/partialjson"
	"github.com/agentloop/agentloop/internal/quote"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// AskMode says how Ask asks for the answer.
type AskMode int

// The ways Ask asks.
const (
	// AskAuto asks natively where the provider offers structured output
	// (providers.StructuredOutput), and by a final-answer tool elsewhere.
	// An OpenAI-compatible server that accepts response_format but ignores
	// it answers in prose: ask it with AskTool.
	AskAuto AskMode = iota
	// AskNative asks for the answer as JSON fitting the schema
	// (Request.Output).
	AskNative
	// AskTool offers a final-answer tool whose arguments are the answer.
	AskTool
)

// AskOptions configure AskWith. The zero value is ready to use.
type AskOptions struct {
	// Name names the answer: the final-answer tool, or the schema; empty
	// means "final_answer".
	Name string
	// Description tells the model what the answer is; empty means a
	// default.
	Description string
	// MaxAttempts bounds the answers the model may give; 0 means 3.
	MaxAttempts int
	// Mode says how the answer is asked for.
	Mode AskMode
}

// AnswerError is Ask's error when the model gave no answer that fits
// within MaxAttempts.
type AnswerError struct {
	Attempts int
	// Answer is the last answer as the model wrote it (its JSON text, or
	// the final-answer tool's arguments); an answer larger than the cap on
	// tool arguments (RequestOptions.MaxArgumentBytes) is kept as an
	// excerpt of that size, its head and its tail (the whole answer is in
	// the transcript).
	Answer string
	// Problem is what was wrong with it: the validation listing, a cut-off
	// answer, an answer in prose, one too large; at most
	// MaxQuotedAnswerBytes, cut as the corrections cut it.
	Problem string
	// Mode is how the answer was asked for: AskNative or AskTool (AskAuto
	// resolved).
	Mode AskMode
}

// Error says how many answers failed and what was wrong with the last.
// For an answer asked for natively it also names the way out when the
// server ignored the schema.
func (e *AnswerError) Error() string {
	attempts := "attempts"
	if e.Attempts == 1 {
		attempts = "attempt"
	}
	if e.Mode == AskNative && e.Problem != AnswerCutOffProblem {
		return fmt.Sprintf("agent: no answer fit after %d %s, asked natively (%s); the last: %s", e.Attempts, attempts, askNativeHint, e.Problem)
	}
	return fmt.Sprintf("agent: no answer fit after %d %s; the last: %s", e.Attempts, attempts, e.Problem)
}

// askNativeHint is the part of AnswerError's text that points a
// native Ask that failed to the tool mode: a server that ignores the
// request's schema (response_format on OpenAI-compatible servers) answers
// in prose or in JSON of its own shape, however often it is corrected.
const askNativeHint = "a server that ignores response_format answers in prose: " +
	"AskWith(ctx, a, prompt, agent.AskOptions{Mode: agent.AskTool}) asks through a final-answer tool instead"

// Ask runs prompt and returns the model's final answer as a T: see
// AskWith.
//
// How the answer is asked for depends on the provider (AskOptions.Mode):
// natively, as JSON fitting T's schema (response_format on
// OpenAI-compatible servers), where the provider offers structured output;
// elsewhere through a tool named "final_answer" whose arguments are the
// answer. A server that accepts response_format but ignores it answers in
// prose; ask it with AskWith and AskOptions{Mode: AskTool}.
//
// To script an answer with providers/faux (which offers no structured
// output), reply with a call to that tool:
//
//	model := faux.New(faux.Reply(faux.Call("a1", "final_answer", map[string]any{"number": "INV-7"})))
func Ask[T any](ctx context.Context, a *Agent, prompt string) (T, error) {
	return AskWith[T](ctx, a, prompt, AskOptions{})
}

// AskWith runs prompt and returns the model's final answer as a T. The
// model may use the agent's tools first. The answer's schema comes from T
// as a tool's does (its fields, json and jsonschema tags), and the answer
// goes through the same coercion and validation as a tool's arguments: one
// that does not fit (not JSON, a wrong type, a missing field) is sent back
// with the preflight's listing of what is wrong and the model tries again,
// up to MaxAttempts answers, after which AskWith returns an *AnswerError
// holding the last answer and its problem. An answer cut off at the token
// limit is never accepted, even when its JSON happens to parse. An answer
// is held to the cap on tool arguments, RequestOptions.MaxArgumentBytes,
// whichever way it comes: through the final-answer tool the preflight
// refuses a larger one, and a native answer larger than it is refused
// unread. A correction quotes at most MaxQuotedAnswerBytes of the answer
// and its problem. Every attempt is in the events and the transcript, as
// any turn is.
func AskWith[T any](ctx context.Context, a *Agent, prompt string, opts AskOptions) (T, error) {
	var zero T
	if opts.Name == "" {
		opts.Name = "final_answer"
	}
	if opts.Description == "" {
		opts.Description = AnswerDescription
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	st := &asking{opts: opts}
	tool, err := tools.New(tools.Config{Name: opts.Name, Description: opts.Description},
		func(_ context.Context, in T) (tools.Result, error) {
			st.mu.Lock()
			st.answer = in
			st.answered = true
			st.mu.Unlock()
			return tools.Result{Content: []providers.Content{providers.Text{Text: AnswerAcceptedText}}, Terminate: true}, nil
		})
	if err != nil {
		return zero, err
	}
	st.tool = tool
	r, c, cfg, err := a.start(ctx, false)
	if err != nil {
		return zero, err
	}
	st.maxBytes = cfg.RequestOptions.ArgumentLimit()
	st.native = opts.Mode == AskNative
	if so, ok := cfg.Provider.(providers.StructuredOutput); ok && opts.Mode == AskAuto {
		st.native = so.StructuredOutput()
	}
	st.configure(&c, &cfg)
	msg := providers.NewUserText(prompt)
	err = a.finish(r, func(emit events.Handler) error {
		_, err := loop.Run(r.ctx, []providers.Message{msg}, c, cfg, emit)
		return err
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.answered:
		return st.answer.(T), nil
	case err != nil:
		return zero, err
	}
	return zero, &AnswerError{Attempts: st.attempts, Answer: st.last, Problem: st.problem, Mode: st.mode()}
}

// asking is the state of one AskWith.
type asking struct {
	opts     AskOptions
	tool     *tools.Tool
	native   bool
	maxBytes int // the cap on an answer, or -1 for none

	mu       sync.Mutex
	answer   any
	answered bool
	attempts int
	last     string // the last answer given
	problem  string // what was wrong with it
	fix      providers.Message
}

// mode is how the answer is asked for, AskAuto resolved.
func (st *asking) mode() AskMode {
	if st.native {
		return AskNative
	}
	return AskTool
}

// configure adds to the run what asking needs: the schema (natively) or
// the final-answer tool, the instruction, and the hooks that judge each
// answer and ask again.
func (st *asking) configure(c *loop.Conversation, cfg *loop.Config) {
	spec := st.tool.Spec()
	if st.native {
		cfg.Output = &providers.OutputFormat{Name: spec.Name, Schema: spec.Parameters, Strict: providers.StrictSchema(spec.Parameters)}
		c.SystemPrompt = joinPrompt(c.SystemPrompt, NativeAnswerPrompt)
	} else {
		c.Tools = append(c.Tools, st.tool)
		c.SystemPrompt = joinPrompt(c.SystemPrompt, toolAnswerPrompt(spec.Name))
	}
	cfg.Hooks = append(cfg.Hooks, loop.Hooks{ShouldStopAfterTurn: st.judge})
	cfg.Queue = &askQueue{st: st, next: cfg.Queue}
}

// askQueue puts the correction of an answer that did not fit before the
// follow-ups of the queue it wraps (the agent's).
type askQueue struct {
	st   *asking
	next loop.Queue
}

func (q *askQueue) Steering(ctx context.Context) []providers.Message { return q.next.Steering(ctx) }

func (q *askQueue) FollowUp(ctx context.Context) []providers.Message {
	q.st.mu.Lock()
	fix := q.st.fix
	q.st.fix = nil
	q.st.mu.Unlock()
	if fix != nil {
		return []providers.Message{fix}
	}
	return q.next.FollowUp(ctx)
}

func joinPrompt(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// judge looks at a finished turn and reports whether asking is over: the
// answer was accepted, or the attempts are spent. An answer that does not
// fit leaves a message asking again.
func (st *asking) judge(ctx context.Context, turn loop.Turn) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.answered {
		return true
	}
	m := turn.Message
	if !st.native {
		for _, r := range turn.ToolResults {
			if r.ToolName == st.opts.Name && r.IsError {
				st.attempts++
				st.last, st.problem = st.bounded(argumentsOf(m, r.ToolCallID)), excerpt(r.Text(), MaxQuotedAnswerBytes)
			}
		}
		if !m.HasToolCalls() && m.StopReason != providers.StopReasonError && m.StopReason != providers.StopReasonAborted {
			st.attempts++
			st.last, st.problem = st.bounded(m.Text()), proseAnswerProblem(st.opts.Name)
			st.fix = providers.NewUserText(proseAnswerText(st.opts.Name))
		}
		return st.attempts >= st.opts.MaxAttempts
	}
	if m.HasToolCalls() || m.StopReason == providers.StopReasonError || m.StopReason == providers.StopReasonAborted {
		return false // still working, or failed: the run says so
	}
	st.attempts++
	if n := textBytes(m.Content); st.maxBytes >= 0 && n > st.maxBytes {
		// Refused unread: neither parsed nor copied whole.
		st.last = textExcerpt(m.Content, n, st.maxBytes)
		st.problem = oversizedAnswerProblem(n, st.maxBytes)
		st.fix = providers.NewUserText(oversizedAnswerText(n, st.maxBytes, textExcerpt(m.Content, n, MaxQuotedAnswerBytes)))
		return st.attempts >= st.opts.MaxAttempts
	}
	st.last = m.Text()
	if m.StopReason == providers.StopReasonLength {
		st.problem = AnswerCutOffProblem
		st.fix = providers.NewUserText(AnswerCutOffText)
		return st.attempts >= st.opts.MaxAttempts
	}
	text := unfence(st.last)
	args, complete := partialjson.ParseObject(text)
	var err error
	if !complete {
		err = errors.New(AnswerNotObjectProblem)
	} else {
		var inv *tools.Invocation
		if inv, err = st.tool.Check(args); err == nil {
			st.mu.Unlock()
			_, err = inv.Run(ctx) // records the answer
			st.mu.Lock()
			if err == nil && st.answered {
				return true
			}
		}
	}
	st.problem = excerpt(misfit(err, text), MaxQuotedAnswerBytes)
	st.fix = providers.NewUserText(misfitAnswerText(st.problem))
	return st.attempts >= st.opts.MaxAttempts
}

// misfit is what is wrong with a native answer: the error's text, except
// that a validation listing quotes the answer as the model wrote it, cut
// to MaxQuotedAnswerBytes, instead of the whole value received indented
// (whose text can be many times the answer's size).
func misfit(err error, answer string) string {
	var ve *tools.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	listing := *ve
	listing.Received = nil // its text ends with the value received: "null"
	return strings.TrimSuffix(listing.Error(), "null") + excerpt(answer, MaxQuotedAnswerBytes/2)
}

// bounded cuts an answer larger than the cap to an excerpt of that size.
func (st *asking) bounded(answer string) string {
	if st.maxBytes < 0 {
		return answer
	}
	return excerpt(answer, st.maxBytes)
}

// textBytes is the size of the text blocks in content.
func textBytes(content []providers.Content) int {
	n := 0
	for _, c := range content {
		if t, ok := c.(providers.Text); ok {
			n += len(t.Text)
		}
	}
	return n
}

// textExcerpt is excerpt(TextOf(content), max) for text of n bytes in all,
// without putting the whole text together.
func textExcerpt(content []providers.Content, n, max int) string {
	if n <= max {
		return providers.TextOf(content)
	}
	want := max/2 + utf8.UTFMax
	var head, tail []string
	for i, got := 0, 0; i < len(content) && got < want; i++ {
		if t, ok := content[i].(providers.Text); ok {
			k := min(len(t.Text), want-got)
			head, got = append(head, t.Text[:k]), got+k
		}
	}
	for i, got := len(content)-1, 0; i >= 0 && got < want; i-- {
		if t, ok := content[i].(providers.Text); ok {
			k := min(len(t.Text), want-got)
			tail, got = append(tail, t.Text[len(t.Text)-k:]), got+k
		}
	}
	slices.Reverse(tail)
	return quote.Join(strings.Join(head, ""), strings.Join(tail, ""), n, max)
}

// unfence takes JSON out of a Markdown code fence, if it is in one.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t[strings.IndexByte(t+"\n", '\n'):], "\n")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	return t
}

// argumentsOf is the argument text of the call with the given id.
func argumentsOf(m providers.AssistantMessage, id string) string {
	for _, c := range m.ToolCalls() {
		if c.ID == id {
			if c.RawArguments != "" {
				return c.RawArguments
			}
			b, _ := json.Marshal(c.Arguments)
			return string(b)
		}
	}
	return ""
}
