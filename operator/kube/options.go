package kube

import "fmt"

// Who a client applies as is given, not known: the engine's layer above (operator/action)
// names istioctl's field manager and the fields controllers take over.

// ControllerField is a field an install renders that a controller takes over once it
// runs (istiod's webhooks' caBundle): once another field manager owns it, Apply leaves it
// out. List is the list of named items it lives in; Path, the field inside each item.
type ControllerField struct {
	Kind string
	List string
	Path []string
}

// Option configures a Client.
type Option func(*Client)

// FieldManager is the server-side apply field manager Apply writes as (required by Apply).
func FieldManager(manager string) Option { return func(c *Client) { c.fieldManager = manager } }

// ControllerFields are the fields Apply yields to the controller that owns them (Yield).
func ControllerFields(fields ...ControllerField) Option {
	return func(c *Client) { c.controllerFields = fields }
}

// Configure applies options to a client built elsewhere (a test's, a hook's).
func (c *Client) Configure(opts ...Option) {
	for _, o := range opts {
		o(c)
	}
}

// Manager is the field manager Apply writes as ("" when none was given).
func (c *Client) Manager() string { return c.fieldManager }

func (c *Client) needManager() error {
	if c.fieldManager == "" {
		return fmt.Errorf("kube: the client was given no field manager to apply as (kube.FieldManager)")
	}
	return nil
}
