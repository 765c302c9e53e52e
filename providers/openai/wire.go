package openai

import (
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/providers"
)

// chunk is one event of a Chat Completions stream: what OpenAI sends, and
// the fields other servers add that go-openai's types lack (reasoning under
// other names, Groq's usage, an error object next to the choices).
type chunk struct {
	Choices []struct {
		Index        int    `json:"index"`
		Delta        delta  `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	Error *wireError `json:"error"`
}

type delta struct {
	Content          string          `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"` // DeepSeek, xAI, Z.ai, vLLM
	Reasoning        string          `json:"reasoning"`         // Groq, OpenRouter, newer vLLM
	ReasoningText    string          `json:"reasoning_text"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() providers.Usage {
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return providers.Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens, CacheRead: cached, TotalTokens: total}
}

// wireError is an error object in a stream: usually {"message": ...}, but
// some servers send a bare string.
type wireError json.RawMessage

func (e *wireError) UnmarshalJSON(b []byte) error {
	*e = append((*e)[:0], b...)
	return nil
}

func (e *wireError) message() string {
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(*e, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var str string
	if json.Unmarshal(*e, &str) == nil && str != "" {
		return str
	}
	return strings.TrimSpace(string(*e))
}
