package onion

import "github.com/onionkit/onion/loop"

// DeniedText is what the model reads when a call that needed approval was
// not approved: the approver said no, failed, panicked or was not there,
// or the question went unanswered. It is the loop's own text
// (loop.DeniedText), and every other door a tool is reached through
// (mcp/mcpserver) says it too, so that a model is told the same thing
// wherever it calls from.
const DeniedText = loop.DeniedText
