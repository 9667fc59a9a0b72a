package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/history"
)

// History lists the install records in the istio namespace.
type History struct {
	*Config
	// Revision limits the listing to one revision ("default" for the default one).
	Revision string
}

// Run reads the records, oldest first per revision. It takes no lock: a warning
// (Config.Warn) says when another run is writing.
func (a *History) Run(ctx context.Context) ([]*history.Record, error) {
	client, err := a.newClient()
	if err != nil {
		return nil, err
	}
	records, err := (&history.Store{Client: client, Namespace: a.istioNamespace()}).List(ctx, a.Revision)
	if err == nil {
		a.warnIfWriting(ctx, client)
	}
	return records, err
}

// Namespace is where the records are read.
func (a *History) Namespace() string { return a.istioNamespace() }
