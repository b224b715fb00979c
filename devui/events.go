package devui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// This file is the pages' live view: each page holds one event stream
// (Server-Sent Events). Its first event is a snapshot of everything;
// then each change comes as an event. A page that cannot keep up is not
// waited for: when its queue passes its bounds, the queue is dropped and
// the page gets a fresh snapshot instead, so a slow page costs the UI a
// bounded queue, never a stalled run.

// Bounds of one page's queue of events not yet written.
const (
	maxQueued      = 4096
	maxQueuedBytes = 4 << 20
	// flushEvery spaces the writes to a page: the text of a streaming
	// reply that comes meanwhile goes out as one event.
	flushEvery = 30 * time.Millisecond
	// pingEvery keeps an idle stream open through proxies, and finds a
	// page that went away.
	pingEvery = 15 * time.Second
	// writeTimeout bounds one write to a page.
	writeTimeout = 30 * time.Second
)

// client is one page's event stream.
type client struct {
	queue  []queued // guarded by UI.mu
	bytes  int      // of queue; guarded by UI.mu
	resync bool     // a snapshot is due before queue; guarded by UI.mu
	// dropped counts the events dropped for a snapshot; guarded by UI.mu.
	dropped int
	wake    chan struct{} // a value when there is something to write
	done    chan struct{} // closed by close
	once    sync.Once
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *client) close() { c.once.Do(func() { close(c.done) }) }

// queued is one event waiting to be written: encoded, or the text of a
// reply, which the next text of the same reply joins.
type queued struct {
	data   []byte
	run    string
	step   int
	text   string
	isText bool
}

// envelope is an event as a page reads it.
type envelope struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// publish queues the event typ with data for every page. u.mu is held.
func (u *UI) publish(typ string, data any) {
	if len(u.clients) == 0 {
		return
	}
	b, err := json.Marshal(envelope{typ, data})
	if err != nil {
		b, _ = json.Marshal(envelope{"error", fmt.Sprintf("devui: encode a %s event: %v", typ, err)})
	}
	for _, c := range u.clients {
		c.add(queued{data: b})
	}
}

// publishText queues the next text of the reply step of run. u.mu is
// held.
func (u *UI) publishText(run string, step int, text string) {
	if text == "" {
		return
	}
	for _, c := range u.clients {
		if n := len(c.queue); n > 0 && !c.resync {
			last := &c.queue[n-1]
			if last.isText && last.run == run && last.step == step {
				last.text += text
				c.bytes += len(text)
				c.check()
				continue
			}
		}
		c.add(queued{isText: true, run: run, step: step, text: text})
	}
}

// add queues q. UI.mu is held.
func (c *client) add(q queued) {
	if c.resync {
		c.dropped++ // the snapshot will hold it
		return
	}
	c.queue = append(c.queue, q)
	c.bytes += len(q.data) + len(q.text)
	c.check()
	c.signal()
}

// check drops the queue for a snapshot once it is past its bounds. UI.mu
// is held.
func (c *client) check() {
	if len(c.queue) > maxQueued || c.bytes > maxQueuedBytes {
		c.dropped += len(c.queue)
		c.queue, c.bytes, c.resync = nil, 0, true
		c.signal()
	}
}

// textEvent is the event of a reply's text.
type textEvent struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
	Text string `json:"text"`
}

// serveEvents streams events to a page until it goes away or the UI
// closes.
func (u *UI) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	c := &client{wake: make(chan struct{}, 1), done: make(chan struct{}), resync: true}
	u.mu.Lock()
	switch {
	case u.closed:
		u.mu.Unlock()
		http.Error(w, errClosed.Error(), http.StatusServiceUnavailable)
		return
	case len(u.clients) >= u.set.limits.Pages:
		u.mu.Unlock()
		http.Error(w, fmt.Sprintf("devui: %d pages are open already, the most the UI serves: close one", u.set.limits.Pages), http.StatusServiceUnavailable)
		return
	}
	u.clients = append(u.clients, c)
	u.mu.Unlock()
	defer u.dropClient(c)
	c.signal()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-c.wake:
		case <-ping.C:
			buf.WriteString(": ping\n\n")
		case <-c.done:
			return
		case <-r.Context().Done():
			return
		}
		u.mu.Lock()
		if c.resync {
			writeEvent(&buf, u.snapshotLocked())
			c.resync = false
		}
		queue := c.queue
		c.queue, c.bytes = nil, 0
		u.mu.Unlock()
		for _, q := range queue {
			if q.isText {
				b, _ := json.Marshal(envelope{"text", textEvent{q.run, q.step, q.text}})
				writeEvent(&buf, b)
				continue
			}
			writeEvent(&buf, q.data)
		}
		if buf.Len() == 0 {
			continue
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		buf.Reset()
		select {
		case <-time.After(flushEvery):
		case <-c.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// writeEvent writes data, one line of JSON, as an SSE event.
func writeEvent(buf *bytes.Buffer, data []byte) {
	buf.WriteString("data: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}

// dropClient forgets the page c.
func (u *UI) dropClient(c *client) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, o := range u.clients {
		if o == c {
			u.clients = append(u.clients[:i], u.clients[i+1:]...)
			break
		}
	}
	c.close()
}
