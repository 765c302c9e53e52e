package providers

import (
	"encoding/json"
	"fmt"
)

// RoleSummary is the role of a SummaryMessage.
const RoleSummary Role = "summary"

// SummaryMessage stands, in requests, for the first Through messages of
// its transcript: a summary of them made when the conversation outgrew the
// model's context window (package loop/compact). It is stored in the
// transcript, so it survives sessions and is not summarised again; the
// messages it stands for are kept too, and only left out of requests. The
// latest summary is the one sent (as a user message): it was made from
// the one before. Providers do not send a SummaryMessage themselves.
type SummaryMessage struct {
	Summary   string
	Through   int   // how many of the transcript's first messages it stands for (at most its own index)
	Timestamp int64 // milliseconds since the Unix epoch
}

// Role reports RoleSummary.
func (SummaryMessage) Role() Role { return RoleSummary }

type summaryJSON struct {
	Role      Role   `json:"role"`
	Summary   string `json:"summary"`
	Through   int    `json:"through"`
	Timestamp int64  `json:"timestamp"`
}

// MarshalJSON encodes the message with its role.
func (m SummaryMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{RoleSummary, m.Summary, m.Through, m.Timestamp})
}

// UnmarshalJSON decodes the encoding of MarshalJSON.
func (m *SummaryMessage) UnmarshalJSON(data []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("summary message: %w", err)
	}
	if j.Through < 0 {
		return fmt.Errorf("summary message: negative through %d", j.Through)
	}
	*m = SummaryMessage{Summary: j.Summary, Through: j.Through, Timestamp: j.Timestamp}
	return nil
}
