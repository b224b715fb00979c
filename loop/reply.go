package loop

import (
	"errors"
	"fmt"
	"io"
)

// MaxReplyBytes is the most of one whole (not streamed) model reply that
// a provider's wire reads: many times the longest reply any provider
// documents, so that no endpoint, broken or hostile, can make a wire hold
// more of it in memory.
const MaxReplyBytes = 64 << 20

// MaxStreamBytes is the most of one streamed model reply that a wire
// reads, framing included. A stream frames every few characters of the
// reply in an event of a few hundred bytes (OpenAI's: one a token), so
// the longest reply a provider documents (128k tokens) streams in some
// 45 MB, and 1 MiB of tool-call arguments in 4-byte deltas in some 80 MB;
// this is several times the first. A wire holds the reply's text of it,
// not its framing.
const MaxStreamBytes = 256 << 20

// MaxErrorBodyBytes is the most of the body of an error status that a
// wire reads: its status already says what failed.
const MaxErrorBodyBytes = 1 << 20

// ErrReplyTooLarge is the error of a read past LimitReply's bound: sending
// the request again would meet it again.
var ErrReplyTooLarge = errors.New("the model's reply is too large")

// LimitReply returns body bounded to limit bytes. A read past the bound
// fails with an error that says so (ErrReplyTooLarge); with cut set (for the body of an
// error status), the body ends there instead.
func LimitReply(body io.ReadCloser, limit int64, cut bool) io.ReadCloser {
	return &limitedReply{ReadCloser: body, left: limit, limit: limit, cut: cut}
}

type limitedReply struct {
	io.ReadCloser
	left, limit int64
	cut         bool
}

func (b *limitedReply) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if b.cut {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%w: it is longer than the %d bytes read of it", ErrReplyTooLarge, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
