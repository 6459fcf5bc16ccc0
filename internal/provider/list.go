package provider

import "sort"

// ModelIDs lists the catalogue's model ids (built in, or the
// MASSGEN_MODEL_CATALOG override), sorted, for pickers such as quickstart.
func ModelIDs(getenv func(string) string) ([]string, error) {
	cat, err := loadCatalogue(getenv)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cat))
	for id := range cat {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}
