package agent

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/quote"
)

// The texts the model reads while Ask waits for its answer; see the
// README's table. The ones that name the answer or quote it are the
// functions below.
const (
	// AnswerDescription describes the final-answer tool (or the native
	// schema) unless AskOptions.Description gives a description.
	AnswerDescription = "Give the final answer. If it is refused, correct what the refusal names and give it again."
	// AnswerAcceptedText is the final-answer tool's result for an answer
	// that fits.
	AnswerAcceptedText = "Answer accepted."
	// NativeAnswerPrompt joins the system prompt when the answer is asked
	// for natively (AskNative).
	NativeAnswerPrompt = "When you have the answer, reply with it as JSON that fits the schema given, and nothing else."
	// AnswerCutOffText asks again for a native answer that was cut off at
	// the output token limit.
	AnswerCutOffText = "Your answer was cut off at the output token limit. Answer again, more briefly, with JSON that fits the schema."
	// AnswerNotObjectProblem is what is wrong with a native answer that is
	// not a complete JSON object; the correction quotes it.
	AnswerNotObjectProblem = "the answer is not a complete JSON object"
	// AnswerCutOffProblem is AnswerError.Problem for a native answer cut
	// off at the output token limit.
	AnswerCutOffProblem = "the answer was cut off at the output token limit"
)

// MaxQuotedAnswerBytes bounds what a correction quotes of the answer it
// corrects (the listing of what is wrong, the answer received): past it,
// the quote keeps its head and its tail around ExcerptMarker's note.
// AnswerError's Answer and Problem are bounded the same way.
const MaxQuotedAnswerBytes = 8 << 10

// toolAnswerPrompt joins the system prompt when the answer is asked for
// through the final-answer tool (AskTool).
func toolAnswerPrompt(name string) string {
	return fmt.Sprintf("When you have the answer, give it by calling the %s tool.", name)
}

// proseAnswerText asks again for an answer that came as prose instead of
// through the final-answer tool.
func proseAnswerText(name string) string {
	return fmt.Sprintf("Give your final answer by calling the %s tool.", name)
}

// proseAnswerProblem is AnswerError.Problem for an answer in prose.
func proseAnswerProblem(name string) string {
	return "the answer came as prose, not through the " + name + " tool"
}

// misfitAnswerText asks again for a native answer that does not fit the
// schema; problem is the listing (already cut to MaxQuotedAnswerBytes).
func misfitAnswerText(problem string) string {
	return "Your answer does not fit the schema.\n\n" + problem + "\n\nAnswer again with JSON only, correcting what is listed."
}

// oversizedAnswerProblem is what is wrong with a native answer larger
// than the cap on tool arguments (RequestOptions.MaxArgumentBytes), in the
// preflight's words for oversized arguments.
func oversizedAnswerProblem(n, max int) string {
	return fmt.Sprintf("the answer is %d bytes, more than the limit of %d bytes", n, max)
}

// oversizedAnswerText asks again for a native answer larger than the cap;
// excerpt is the answer cut to MaxQuotedAnswerBytes.
func oversizedAnswerText(n, max int, excerpt string) string {
	return fmt.Sprintf("Your answer is %d bytes, more than the limit of %d bytes. It was:\n\n%s\n\n"+
		"Answer again, more briefly, with JSON that fits the schema.", n, max, excerpt)
}

// ExcerptMarker formats the note that stands for the middle of a quote cut
// to MaxQuotedAnswerBytes: n bytes left out.
func ExcerptMarker(n int) string { return quote.Marker(n) }

// excerpt returns s when it is at most max bytes, or its head and its
// tail, at most max bytes in all, around ExcerptMarker.
func excerpt(s string, max int) string { return quote.Excerpt(s, max) }
