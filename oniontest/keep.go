package oniontest

// KeepRequests bounds the requests the server keeps for
// [Server.Requests]: the last n, none when n is 0, and every one when n is
// negative, the default, which suits a small test. A load test's server
// then stays flat however many requests it serves. The bound applies at
// once to the requests kept so far. Requests are numbered as before, kept
// or not: the steps, the reply IDs and the "no step left" failure count
// every request received. It returns s, so that it can follow NewServer,
// Record or Playback:
//
//	s := oniontest.NewServer(t, steps...).KeepRequests(100)
func (s *Server) KeepRequests(n int) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = max(n, -1)
	switch {
	case s.keep == 0:
		s.requests = nil
	case s.keep > 0 && len(s.requests) > s.keep:
		s.compact()
	}
	return s
}

// keepRequest counts req and keeps it as the server was asked to, and
// returns its 1-based number. s.mu must be held.
func (s *Server) keepRequest(req Request) int {
	s.received++
	if s.keep == 0 {
		return s.received
	}
	s.requests = append(s.requests, req)
	// Letting the slice grow to twice the bound before moving the last
	// keep requests to its front costs each request one copy on average.
	if s.keep > 0 && len(s.requests) >= 2*s.keep {
		s.compact()
	}
	return s.received
}

// compact moves the last s.keep requests to the front of s.requests and
// clears the rest, so that the requests dropped can be collected.
// s.mu must be held.
func (s *Server) compact() {
	n := copy(s.requests, s.requests[len(s.requests)-s.keep:])
	clear(s.requests[n:])
	s.requests = s.requests[:n]
}

// kept is the requests Requests returns. s.mu must be held.
func (s *Server) kept() []Request {
	if s.keep >= 0 && len(s.requests) > s.keep {
		return s.requests[len(s.requests)-s.keep:]
	}
	return s.requests
}
