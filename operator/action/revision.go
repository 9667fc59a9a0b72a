package action

import (
	"context"
	"fmt"

	"github.com/istioctl-installer/istioctl/operator/revision"
)

// RevisionList is x revision list: every revision and what runs under it.
type RevisionList struct{ *Config }

// Run reads the revisions.
func (a *RevisionList) Run(ctx context.Context) ([]*revision.Revision, error) {
	client, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	revs, err := revision.List(ctx, client, a.istioNamespace())
	if err != nil {
		return nil, fmt.Errorf("listing revisions: %w", err)
	}
	return revs, nil
}
