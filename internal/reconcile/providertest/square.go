package providertest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// Square serves SearchEvents as Square's API does (connect-api-specification,
// SearchEvents): POST /v2/events with limit (at most 100), query.filter
// .created_at.start_at, query.sort (DEFAULT, ASC or DESC) and a cursor
// that only the query it came from may use; the last 28 days. It takes a
// Bearer personal access token and a Square-Version header.
type Square struct {
	common
	Token  string
	events []squareFake // oldest first
	// Queries holds the bodies of the searches answered.
	Queries [][]byte
}

type squareFake struct {
	at   time.Time
	body map[string]any
}

// NewSquare serves token.
func NewSquare(t testing.TB, token string) *Square {
	s := &Square{Token: token}
	s.start(t, s.serve)
	return s
}

// Event logs an event and returns it as its webhook carries it.
func (s *Square) Event(id, eventType string, at time.Time) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := map[string]any{"merchant_id": "6SSW7HV8K2ST5", "type": eventType, "event_id": id, "created_at": at.UTC().Format("2006-01-02T15:04:05.000Z"),
		"data": map[string]any{"type": "payment", "id": "KkAkhdMs" + id[:8], "object": map[string]any{"payment": map[string]any{"id": "KkAkhdMs" + id[:8], "status": "COMPLETED"}}}}
	s.events = append(s.events, squareFake{at: at, body: e})
	b, _ := json.Marshal(e)
	return b
}

func squareError(w http.ResponseWriter, status int, category, code, detail string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]string{{"category": category, "code": code, "detail": detail}}})
}

func (s *Square) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		squareError(w, http.StatusUnauthorized, "AUTHENTICATION_ERROR", "UNAUTHORIZED", "This request could not be authorized.")
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v2/events" {
		squareError(w, http.StatusNotFound, "INVALID_REQUEST_ERROR", "NOT_FOUND", "Resource not found.")
		return
	}
	if r.Header.Get("Square-Version") == "" || r.Header.Get("Content-Type") != "application/json" {
		squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "BAD_REQUEST", "Square-Version and a JSON body are required.")
		return
	}
	var req struct {
		Cursor string `json:"cursor"`
		Limit  *int   `json:"limit"`
		Query  struct {
			Filter struct {
				CreatedAt struct {
					StartAt string `json:"start_at"`
				} `json:"created_at"`
			} `json:"filter"`
			Sort struct {
				Field string `json:"field"`
				Order string `json:"order"`
			} `json:"sort"`
		} `json:"query"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_BODY", "The body is not JSON.")
		return
	}
	limit := 100
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > 100 {
			squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_VALUE", "limit must be between 1 and 100.")
			return
		}
		limit = *req.Limit
	}
	if f := req.Query.Sort.Field; f != "" && f != "DEFAULT" {
		squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_ENUM_VALUE", "sort.field must be DEFAULT.")
		return
	}
	query, _ := json.Marshal(req.Query)
	s.Queries = append(s.Queries, query)
	offset := 0
	if req.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.Cursor)
		var c struct {
			Offset int
			Query  string
		}
		if err != nil || json.Unmarshal(raw, &c) != nil || c.Query != string(query) {
			squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_CURSOR", "The cursor does not belong to this query.")
			return
		}
		offset = c.Offset
	}
	var startAt time.Time
	if v := req.Query.Filter.CreatedAt.StartAt; v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			squareError(w, http.StatusBadRequest, "INVALID_REQUEST_ERROR", "INVALID_TIME", "created_at.start_at is not RFC 3339.")
			return
		}
		startAt = t
	}
	var matching []squareFake
	for _, e := range s.events {
		if !e.at.Before(startAt) && !e.at.Before(time.Now().AddDate(0, 0, -28)) {
			matching = append(matching, e)
		}
	}
	if req.Query.Sort.Order != "ASC" { // DESC is the default
		for i, j := 0, len(matching)-1; i < j; i, j = i+1, j-1 {
			matching[i], matching[j] = matching[j], matching[i]
		}
	}
	from, to := page(offset, limit, len(matching))
	events := make([]map[string]any, 0, to-from)
	meta := make([]map[string]string, 0, to-from)
	for _, e := range matching[from:to] {
		events = append(events, e.body)
		meta = append(meta, map[string]string{"event_id": e.body["event_id"].(string), "api_version": "2025-08-20"})
	}
	out := map[string]any{"events": events, "metadata": meta}
	if to < len(matching) {
		c, _ := json.Marshal(map[string]any{"Offset": to, "Query": string(query)})
		out["cursor"] = base64.RawURLEncoding.EncodeToString(c)
	}
	writeJSON(w, http.StatusOK, out)
}
