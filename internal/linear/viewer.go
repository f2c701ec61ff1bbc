package linear

import "context"

// Viewer is the app user the client acts as in a workspace. Its ID is the
// agent's user id there (webhooks call it appUserId), which differs per
// workspace.
type Viewer struct {
	ID               string
	Name             string
	OrganizationID   string
	OrganizationName string
}

// Viewer returns the app user for the context's workspace; right after an
// OAuth install it tells which workspace the new token belongs to.
func (c *Client) Viewer(ctx context.Context) (*Viewer, error) {
	var resp *viewerResponse
	err := c.do(ctx, "get viewer", func(ctx context.Context) error {
		var err error
		resp, err = viewer(ctx, c.gql)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := resp.Viewer
	return &Viewer{ID: v.Id, Name: v.Name, OrganizationID: v.Organization.Id, OrganizationName: v.Organization.Name}, nil
}
