package providers

import (
	"encoding/json"
	"fmt"
	"time"
)

// Role names who a message comes from.
type Role string

// The roles of the standard messages.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
)

// Message is one entry of a transcript. The standard messages are
// [UserMessage], [AssistantMessage] and [ToolResultMessage]; applications may
// keep messages of their own in a transcript (any type with a Role method),
// as long as the loop's ConvertToLLM hook translates or drops them before a
// provider sees them.
type Message interface {
	Role() Role
}

// StopReason says why the model stopped producing a message.
type StopReason string

// The stop reasons. The loop branches on three of them: error and aborted
// end the run; length fails every tool call in the message; anything else
// runs the tool calls the message holds.
const (
	StopReasonStop    StopReason = "stop"
	StopReasonLength  StopReason = "length"
	StopReasonToolUse StopReason = "toolUse"
	StopReasonError   StopReason = "error"
	StopReasonAborted StopReason = "aborted"
	// StopReasonPending marks a partial message that is still streaming.
	StopReasonPending StopReason = "pending"
)

// UserMessage is a message from the user: text and images.
type UserMessage struct {
	Content   []Content
	Timestamp int64 // milliseconds since the Unix epoch
}

// AssistantMessage is one response of the model.
type AssistantMessage struct {
	Content      []Content
	API          string
	Provider     string
	Model        string
	Usage        Usage
	StopReason   StopReason
	ErrorMessage string
	Timestamp    int64 // milliseconds since the Unix epoch
}

// ToolResultMessage answers one tool call.
type ToolResultMessage struct {
	ToolCallID string
	ToolName   string
	Content    []Content
	// Details is structured data for user interfaces and logs; the model
	// does not see it.
	Details any
	// Usage is the tool's own usage, if it reported one.
	Usage     *Usage
	IsError   bool
	Timestamp int64 // milliseconds since the Unix epoch
}

// Role reports RoleUser.
func (UserMessage) Role() Role { return RoleUser }

// Role reports RoleAssistant.
func (AssistantMessage) Role() Role { return RoleAssistant }

// Role reports RoleToolResult.
func (ToolResultMessage) Role() Role { return RoleToolResult }

// NewUserText returns a user message holding one text block, stamped now.
func NewUserText(text string) UserMessage {
	return UserMessage{Content: []Content{Text{Text: text}}, Timestamp: Now()}
}

// Now returns the current time in milliseconds since the Unix epoch, the unit
// of every message timestamp.
func Now() int64 { return time.Now().UnixMilli() }

// Text returns the concatenation of the message's text blocks.
func (m UserMessage) Text() string { return TextOf(m.Content) }

// Text returns the concatenation of the message's text blocks.
func (m AssistantMessage) Text() string { return TextOf(m.Content) }

// Text returns the concatenation of the message's text blocks.
func (m ToolResultMessage) Text() string { return TextOf(m.Content) }

// ToolCalls returns the tool-call blocks of the message, in order.
func (m AssistantMessage) ToolCalls() []ToolCall {
	n := 0
	for _, c := range m.Content {
		if _, ok := c.(ToolCall); ok {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	calls := make([]ToolCall, 0, n)
	for _, c := range m.Content {
		if tc, ok := c.(ToolCall); ok {
			calls = append(calls, tc)
		}
	}
	return calls
}

// HasToolCalls reports whether the message holds at least one tool call.
func (m AssistantMessage) HasToolCalls() bool {
	for _, c := range m.Content {
		if _, ok := c.(ToolCall); ok {
			return true
		}
	}
	return false
}

// blocks is a content list that encodes as a JSON array (never null).
type blocks []Content

// MarshalJSON encodes the list, empty as [].
func (b blocks) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Content(b))
}

type userJSON struct {
	Role      Role            `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp int64           `json:"timestamp"`
}

// MarshalJSON encodes the message with the reference's field names.
func (m UserMessage) MarshalJSON() ([]byte, error) {
	c, err := json.Marshal(blocks(m.Content))
	if err != nil {
		return nil, err
	}
	return json.Marshal(userJSON{RoleUser, c, m.Timestamp})
}

// UnmarshalJSON accepts content as a string or as a list of blocks.
func (m *UserMessage) UnmarshalJSON(data []byte) error {
	var j userJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("user message: %w", err)
	}
	m.Timestamp = j.Timestamp
	var s string
	if err := json.Unmarshal(j.Content, &s); err == nil {
		m.Content = []Content{Text{Text: s}}
		return nil
	}
	c, err := unmarshalBlocks(j.Content)
	if err != nil {
		return fmt.Errorf("user message: %w", err)
	}
	m.Content = c
	return nil
}

type assistantJSON struct {
	Role         Role       `json:"role"`
	Content      blocks     `json:"content"`
	API          string     `json:"api"`
	Provider     string     `json:"provider"`
	Model        string     `json:"model"`
	Usage        Usage      `json:"usage"`
	StopReason   StopReason `json:"stopReason"`
	ErrorMessage string     `json:"errorMessage,omitempty"`
	Timestamp    int64      `json:"timestamp"`
}

// MarshalJSON encodes the message with the reference's field names.
func (m AssistantMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(assistantJSON{RoleAssistant, m.Content, m.API, m.Provider, m.Model,
		m.Usage, m.StopReason, m.ErrorMessage, m.Timestamp})
}

// UnmarshalJSON decodes the reference's encoding.
func (m *AssistantMessage) UnmarshalJSON(data []byte) error {
	var j struct {
		assistantJSON
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("assistant message: %w", err)
	}
	c, err := unmarshalBlocks(j.Content)
	if err != nil {
		return fmt.Errorf("assistant message: %w", err)
	}
	a := j.assistantJSON
	*m = AssistantMessage{c, a.API, a.Provider, a.Model, a.Usage, a.StopReason, a.ErrorMessage, a.Timestamp}
	return nil
}

type toolResultJSON struct {
	Role       Role   `json:"role"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Content    blocks `json:"content"`
	Details    any    `json:"details,omitempty"`
	Usage      *Usage `json:"usage,omitempty"`
	IsError    bool   `json:"isError"`
	Timestamp  int64  `json:"timestamp"`
}

// MarshalJSON encodes the message with the reference's field names.
func (m ToolResultMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolResultJSON{RoleToolResult, m.ToolCallID, m.ToolName, m.Content,
		m.Details, m.Usage, m.IsError, m.Timestamp})
}

// UnmarshalJSON decodes the reference's encoding.
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	var j struct {
		toolResultJSON
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("toolResult message: %w", err)
	}
	c, err := unmarshalBlocks(j.Content)
	if err != nil {
		return fmt.Errorf("toolResult message: %w", err)
	}
	t := j.toolResultJSON
	*m = ToolResultMessage{t.ToolCallID, t.ToolName, c, t.Details, t.Usage, t.IsError, t.Timestamp}
	return nil
}

// RawMessage is a message of a role this package does not know, kept as its
// JSON so that a transcript survives a round trip. Applications that keep
// custom messages in a transcript decode them from it.
type RawMessage struct {
	RoleName Role
	JSON     json.RawMessage
}

// Role reports the message's role field.
func (m RawMessage) Role() Role { return m.RoleName }

// MarshalJSON returns the message's JSON unchanged.
func (m RawMessage) MarshalJSON() ([]byte, error) { return m.JSON, nil }

// UnmarshalMessage decodes one message, choosing its Go type by the "role"
// field. Unknown roles decode to [RawMessage].
func UnmarshalMessage(data []byte) (Message, error) {
	var head struct {
		Role Role `json:"role"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	switch head.Role {
	case RoleUser:
		var m UserMessage
		err := m.UnmarshalJSON(data)
		return m, err
	case RoleAssistant:
		var m AssistantMessage
		err := m.UnmarshalJSON(data)
		return m, err
	case RoleToolResult:
		var m ToolResultMessage
		err := m.UnmarshalJSON(data)
		return m, err
	case RoleSummary:
		var m SummaryMessage
		err := m.UnmarshalJSON(data)
		return m, err
	case "":
		return nil, fmt.Errorf("message: missing role")
	default:
		return RawMessage{head.Role, append(json.RawMessage(nil), data...)}, nil
	}
}
