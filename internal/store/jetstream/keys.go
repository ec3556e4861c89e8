package jetstream

import (
	"fmt"
	"strconv"

	"github.com/hookgate/hookgate/internal/store"
)

// The subjects and keys the store's streams and buckets are named by.

func (s *Store) eventSubject(id store.ID) string { return s.subject + ".ev." + id.String() }

func (s *Store) workSubject(upstream string, k store.DeliveryKey) string {
	return fmt.Sprintf("%s.work.%s.%s.%d", s.subject, upstream, k.Event, k.Index)
}

func (s *Store) deadSubject(upstream string, k store.DeliveryKey) string {
	return fmt.Sprintf("%s.dead.%s.%s.%d", s.subject, upstream, k.Event, k.Index)
}

func stateKey(k store.DeliveryKey) string { return k.Event.String() + "." + strconv.Itoa(int(k.Index)) }

// unavailable marks errors that mean the servers cannot take a write now.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
}
