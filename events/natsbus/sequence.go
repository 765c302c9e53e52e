package natsbus

// sequencer decides which of a run's messages a subscriber delivers, from
// their sequence numbers. Messages come in the stream's order; a genuine
// publisher's sequence only grows, by one, or by more where events were
// lost, and never goes back. Anyone who may publish on the subject can
// forge a number, so a jump ahead is accepted but stays revocable: if a
// message then continues from where the sequence was before the jump, the
// jump was not the run's and the subscriber goes back to the run's own
// sequence (counting the jump as bad), instead of taking every genuine
// event for a repeat. The same holds for the first message a subscriber
// sees. Forged messages may be delivered, and are counted; they can never
// silence the run.
type sequencer struct {
	last     uint64 // delivered up to here
	jumpFrom uint64 // last before the first jump since the sequence was whole
	jumping  bool
	bad      uint64
}

// accept reports whether the message numbered seq is to be delivered, and
// notes it.
func (s *sequencer) accept(seq uint64) bool {
	switch {
	case s.jumping && seq == s.jumpFrom+1 && seq <= s.last:
		// The run goes on from before the jump: the jump was forged.
		s.bad++
		s.jumping = false
	case seq <= s.last:
		return false // delivered already
	case seq == s.last+1:
	case s.last > 0 && seq-s.last > MaxGap:
		s.bad++ // too far ahead to be the run's
		return false
	default:
		if !s.jumping {
			s.jumping, s.jumpFrom = true, s.last
		}
	}
	s.last = seq
	return true
}
