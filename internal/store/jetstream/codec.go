package jetstream

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hookgate/hookgate/internal/store"
)

// eventRecord is what an event message carries: the event, and the targets
// its deliveries are made from (a delivery's index is its target's index).
type eventRecord struct {
	Event   *store.Event   `json:"event"`
	Targets []store.Target `json:"targets,omitempty"`
	// Dispatched counts the targets an earlier version of the record had:
	// they may be queued already.
	Dispatched int `json:"dispatched,omitempty"`
}

// workItem is one delivery in the work stream. It carries the whole event,
// so an instance delivers it without reading anything else.
type workItem struct {
	Event  *store.Event `json:"event"`
	Index  uint16       `json:"index"`
	Target store.Target `json:"target"`
	// RetryBase is the attempt count when the delivery was replayed: the
	// retry budget counts from there.
	RetryBase int `json:"retry_base,omitempty"`
}

// deliveryState is a delivery's state with its attempts, kept in the state
// bucket under "<event id>.<index>" from its first attempt (or cancel, or
// import) on; a queued delivery without one is pending with no attempts.
type deliveryState struct {
	store.Delivery
	Log []store.Attempt `json:"log,omitempty"`
}

// maxLoggedAttempts bounds the attempts kept per delivery.
const maxLoggedAttempts = 100

// frame packs JSON metadata and a raw body into one message: a 4-byte
// length, the metadata, then the body byte for byte.
func frame(meta any, body []byte) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(m)+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(m)))
	out = append(out, m...)
	return append(out, body...), nil
}

var errBadFrame = errors.New("malformed message")

// unframe is frame's inverse; the body aliases data.
func unframe(data []byte, meta any) ([]byte, error) {
	if len(data) < 4 {
		return nil, errBadFrame
	}
	n := int(binary.BigEndian.Uint32(data))
	if n > len(data)-4 {
		return nil, errBadFrame
	}
	if err := json.Unmarshal(data[4:4+n], meta); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadFrame, err)
	}
	return data[4+n:], nil
}

func decodeEvent(data []byte) (*eventRecord, error) {
	rec := &eventRecord{}
	body, err := unframe(data, rec)
	if err != nil {
		return nil, err
	}
	if rec.Event == nil {
		return nil, errBadFrame
	}
	rec.Event.Body = body
	return rec, nil
}

func decodeWork(data []byte) (*workItem, error) {
	item := &workItem{}
	body, err := unframe(data, item)
	if err != nil {
		return nil, err
	}
	if item.Event == nil {
		return nil, errBadFrame
	}
	item.Event.Body = body
	return item, nil
}
