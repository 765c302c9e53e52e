package openai

import (
	"encoding/json"
	"regexp"
	"strings"
)

// What goes back to the Responses API of an assistant message's opaque
// data is rebuilt from checked fields, never copied: a session is input
// from outside, and a signature that smuggled a whole item (a system or
// developer message, a function_call_output) would reach the server as
// the conversation's own.

// itemID is the shape of an item id the provider sends back.
var itemID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// phaseName is the shape of a message's phase (commentary, final_answer).
var phaseName = regexp.MustCompile(`^[a-z][a-z_]{0,31}$`)

// reasoningItem is a reasoning item as sent back with store false: its
// id, its summary and its encrypted content, which the server reads in
// place of the item it did not keep.
type reasoningItem struct {
	Type             string        `json:"type"`
	ID               string        `json:"id"`
	Summary          []summaryPart `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// reasoningFrom reads a thinking block's signature as the reasoning item
// to send back. ok is false unless it is one the server can resolve
// without having stored it: a JSON object of type "reasoning" with an id
// of the usual shape, a summary of summary_text parts (or none) and
// non-empty encrypted_content. A reasoning item without encrypted_content
// would be looked up by its id, which a stateless request (store false)
// cannot resolve: the server refuses the whole request with 404. Other
// fields the server sent (status, content) are not sent back.
func reasoningFrom(signature string) (item reasoningItem, ok bool) {
	if !strings.HasPrefix(strings.TrimSpace(signature), "{") {
		return reasoningItem{}, false
	}
	var in struct {
		Type             *string          `json:"type"`
		ID               *string          `json:"id"`
		Summary          *json.RawMessage `json:"summary"`
		EncryptedContent *string          `json:"encrypted_content"`
	}
	if json.Unmarshal([]byte(signature), &in) != nil || in.Type == nil || in.ID == nil || in.EncryptedContent == nil {
		return reasoningItem{}, false
	}
	if *in.Type != "reasoning" || !itemID.MatchString(*in.ID) || *in.EncryptedContent == "" {
		return reasoningItem{}, false
	}
	item = reasoningItem{Type: "reasoning", ID: *in.ID, Summary: []summaryPart{}, EncryptedContent: *in.EncryptedContent}
	if in.Summary != nil && string(*in.Summary) != "null" {
		var parts []map[string]json.RawMessage
		if json.Unmarshal(*in.Summary, &parts) != nil {
			return reasoningItem{}, false
		}
		for _, p := range parts {
			var typ, text string
			if json.Unmarshal(p["type"], &typ) != nil || json.Unmarshal(p["text"], &text) != nil || typ != "summary_text" {
				return reasoningItem{}, false
			}
			item.Summary = append(item.Summary, summaryPart{Type: typ, Text: text})
		}
	}
	return item, true
}

// messageSignature is a text block's message item id and phase to send
// back, each "" unless its signature holds one of the right shape.
func messageSignature(signature string) (id, phase string) {
	var sig textSignature
	if json.Unmarshal([]byte(signature), &sig) != nil {
		return "", ""
	}
	if strings.HasPrefix(sig.ID, "msg_") && itemID.MatchString(sig.ID) {
		id = sig.ID
	}
	if phaseName.MatchString(sig.Phase) {
		phase = sig.Phase
	}
	return id, phase
}

// callItemID is a tool call's function_call item id to send back, "" when
// its signature is not one.
func callItemID(signature string) string {
	if strings.HasPrefix(signature, "fc") && itemID.MatchString(signature) {
		return signature
	}
	return ""
}
