package loop

import (
	"encoding/json"
	"strconv"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// OmittedImageText stands in a tool result for an image that did not fit
// within MaxResultBytes beside the rest of the result. The blocks that fit
// keep their order; each image left out becomes this text block.
const OmittedImageText = "[An image was left out here: with it, the tool result would pass the limit on what can be sent back. " +
	"Ask for fewer or smaller images.]"

// blockOverhead is what every content block counts beyond its own bytes,
// about what its framing costs on the wire, so that a flood of empty
// blocks is as large as it looks.
const blockOverhead = 16

// capResult holds a finished call's result to MaxResultBytes. Every kind of
// content counts, at its size as sent: text, an image's encoded data, a
// thinking block or a tool call. When text and the other blocks that must
// stay pass the cap, the result becomes an error result saying so. When
// images are what pass it, the images that fit stay, in order, and each one
// that does not is replaced by OmittedImageText (if even those notices do
// not fit, the result becomes the error result). Details, which the
// transcript keeps but the model never reads, are dropped when their JSON
// passes the cap on its own.
//
// The result's content slice belongs to the tool: a cut result is a new
// slice.
func (r *run) capResult(c *call) {
	res, n, ok := capped(c.result, r.cfg.Limits.MaxResultBytes)
	if !ok { // the error result's details are its own, empty
		c.fail(events.OutcomeResultTooLarge, oversizedResultText(c.tc.Name, n, limit(r.cfg.Limits.MaxResultBytes, DefaultMaxResultBytes)))
		return
	}
	c.result = res
}

// capPartial holds a body's progress report to MaxResultBytes as capResult
// holds its result; a report too large to hold says so in the words of
// the error result it would be.
func (r *run) capPartial(c *call, p tools.Result) tools.Result {
	res, n, ok := capped(p, r.cfg.Limits.MaxResultBytes)
	if !ok {
		return errorResult(oversizedResultText(c.tc.Name, n, limit(r.cfg.Limits.MaxResultBytes, DefaultMaxResultBytes)))
	}
	return res
}

// capped is res held to the cap max (0 the default, negative none): its
// images that do not fit replaced, its details dropped when too large; or
// false and the size of its content when that cannot fit.
func capped(res tools.Result, max int) (_ tools.Result, size int, ok bool) {
	switch {
	case max < 0:
		return res, 0, true
	case max == 0:
		max = DefaultMaxResultBytes
	}
	fixed, images := 0, 0
	for _, b := range res.Content {
		if img, ok := b.(providers.Image); ok {
			images += imageSize(img)
		} else {
			fixed += blockSize(b)
		}
	}
	if fixed+images > max {
		if fixed > max {
			return res, fixed + images, false
		}
		kept, ok := fitImages(res.Content, max-fixed)
		if !ok {
			return res, fixed + images, false
		}
		res.Content = kept
	}
	if res.Details != nil && !jsonWithin(res.Details, max) {
		res.Details = nil
	}
	return res, fixed + images, true
}

// fitImages returns content with each image that does not fit in the
// bytes left replaced by OmittedImageText, or false when the notices
// themselves do not fit.
func fitImages(content []providers.Content, left int) ([]providers.Content, bool) {
	notice := len(OmittedImageText) + blockOverhead
	out := make([]providers.Content, 0, len(content))
	for _, b := range content {
		img, ok := b.(providers.Image)
		switch {
		case !ok:
			out = append(out, b)
		case imageSize(img) <= left:
			out = append(out, b)
			left -= imageSize(img)
		case notice <= left:
			out = append(out, providers.Text{Text: OmittedImageText})
			left -= notice
		default:
			return nil, false
		}
	}
	return out, true
}

func imageSize(img providers.Image) int { return len(img.Data) + len(img.MIMEType) + blockOverhead }

// blockSize is what a block other than an image counts.
func blockSize(b providers.Content) int {
	n := blockOverhead
	switch b := b.(type) {
	case providers.Text:
		n += len(b.Text) + len(b.Signature)
	case providers.Thinking:
		n += len(b.Thinking) + len(b.Signature)
	case providers.ToolCall:
		n += len(b.ID) + len(b.Name) + len(b.RawArguments) + len(b.Signature) + jsonSize(b.Arguments, int(^uint(0)>>1))
	case nil:
	default: // the set is closed, but a new kind must not pass for free
		raw, _ := json.Marshal(b)
		n += len(raw)
	}
	return n
}

// jsonWithin reports whether v's JSON text is at most max bytes.
func jsonWithin(v any, max int) bool { return jsonSize(v, max) <= max }

// jsonSize is about the size of v's JSON text, or some number past max
// once it is certain to pass max: the walk over the common JSON shapes
// stops there, so a huge value costs no more than the cap. Other values
// are encoded.
func jsonSize(v any, max int) int {
	s := sizer{max: max}
	s.walk(v)
	return s.n
}

// sizer adds up a JSON text's size for jsonSize; a method, not a closure,
// so that measuring allocates nothing.
type sizer struct{ n, max int }

func (s *sizer) walk(v any) bool {
	switch v := v.(type) {
	case nil:
		s.n += 4
	case string:
		s.n += len(v) + 2
	case bool:
		s.n += 5
	case float64:
		var buf [32]byte
		s.n += len(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
	case json.Number:
		s.n += len(v)
	case int:
		s.n += 20
	case map[string]any:
		s.n += 2
		for k, e := range v {
			s.n += len(k) + 4
			if s.n > s.max || !s.walk(e) {
				return false
			}
		}
	case []any:
		s.n += 2
		for _, e := range v {
			s.n++
			if s.n > s.max || !s.walk(e) {
				return false
			}
		}
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return true // the transcript cannot carry it as JSON either way
		}
		s.n += len(raw)
	}
	return s.n <= s.max
}
