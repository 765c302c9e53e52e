// Package conformance plays the language-neutral scenarios of the
// reference's conformance suite through our loop and compares the event
// traces with the reference's golden traces, by the rules of the suite's
// README: scripted tools and model, normalized events, and a comparison that
// reads JSON texts as JSON and validation errors by their paths.
package conformance

import (
	"encoding/json"
)

// Scenario is one scripted run.
type Scenario struct {
	Name           string          `json:"name"`
	About          string          `json:"about"`
	Prompt         string          `json:"prompt"`
	SystemPrompt   string          `json:"systemPrompt"`
	ToolExecution  string          `json:"toolExecution"`
	Tools          []ScriptedTool  `json:"tools"`
	BeforeToolCall []BeforeRule    `json:"beforeToolCall"`
	AfterToolCall  []AfterRule     `json:"afterToolCall"`
	Steering       []QueuedMessage `json:"steering"`
	FollowUp       []QueuedMessage `json:"followUp"`
	Responses      []Response      `json:"responses"`
}

// ScriptedTool is a tool whose body follows a script.
type ScriptedTool struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	ExecutionMode    string          `json:"executionMode"`
	PrepareArguments string          `json:"prepareArguments"`
	DelayMs          int             `json:"delayMs"`
	Updates          []string        `json:"updates"`
	Result           *string         `json:"result"`
	Throws           string          `json:"throws"`
	Terminate        bool            `json:"terminate"`
}

// BeforeRule scripts the policy hook for one call.
type BeforeRule struct {
	ToolCallID string `json:"toolCallId"`
	Action     string `json:"action"` // block, abort, throw
	Reason     string `json:"reason"`
	Message    string `json:"message"`
}

// AfterRule scripts the after-call hook for one call.
type AfterRule struct {
	ToolCallID string  `json:"toolCallId"`
	Content    *string `json:"content"`
	IsError    *bool   `json:"isError"`
	Terminate  *bool   `json:"terminate"`
	Throws     string  `json:"throws"`
}

// QueuedMessage becomes available once AfterTurn turns have ended.
type QueuedMessage struct {
	AfterTurn int    `json:"afterTurn"`
	Text      string `json:"text"`
}

// Response is one scripted model response.
type Response struct {
	Content      []Block `json:"content"`
	StopReason   string  `json:"stopReason"`
	ErrorMessage string  `json:"errorMessage"`
}

// Block is a scripted content block: text or a tool call.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}
