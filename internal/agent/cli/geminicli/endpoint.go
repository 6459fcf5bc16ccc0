package geminicli

// DefaultBaseURL implements cli.DefaultEndpoint.
func (Vendor) DefaultBaseURL() string { return DefaultBaseURL }
