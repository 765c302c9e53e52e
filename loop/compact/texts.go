package compact

// The texts the model reads, in requests and in summary requests. They are
// a contract: tests check them word for word.
const (
	// SummaryLead begins the user message a stored summary is sent as,
	// at the start of a request; the summary follows it.
	SummaryLead = "Summary of the earlier conversation:\n"

	// LeftOutText is the user message a request starts with when older
	// messages were left out and what is left would otherwise start with
	// an assistant message: Anthropic and Gemini want a user message
	// first, and Gemini a call right after a user turn.
	LeftOutText = "[Earlier messages of this conversation were left out to fit the context window.]"

	// SummaryCutText ends a summary cut to its bound
	// (Summarize.SummaryShare, Summarize.MaxSummaryBytes).
	SummaryCutText = "\n[… the rest of the summary was cut to fit the context window …]"

	// DefaultSummaryPrompt is the system prompt of a summary request.
	DefaultSummaryPrompt = "You summarise conversations between a user and an AI assistant that uses tools, " +
		"so that the assistant can go on without the full history. Keep what the user asked for, decisions made, " +
		"facts learned from tools (file names, values, errors), and what is still to do. Write plain prose, at most " +
		"a few hundred words. Do not call tools."

	// SummarySoFar and SummaryAfter frame the previous summary in a
	// summary request's message: SummarySoFar, the summary, SummaryAfter,
	// then a line for each message since.
	SummarySoFar = "Summary so far:\n"
	SummaryAfter = "\n\nWhat came after:\n"

	// SummaryLeftOut stands, in a summary request's message, for the
	// oldest messages that did not fit the request.
	SummaryLeftOut = "[earlier messages left out]"

	// SummaryInstruction ends a summary request's message.
	SummaryInstruction = "\nSummarise the conversation above."
)
