// Package archive moves finished transfers (and the recipients whose transfers are all gone) out
// of the API server into PostgreSQL, so that etcd holds what is live and a bounded tail: the
// transfers that ended within the retention. It holds the pure decisions (what may be archived,
// and when), the archive's store, and its settings; the archiver controller in controllers/
// only gathers, decides and acts, and the REST facade reads the store on a cache miss.
//
// The order of every archival is the guarantee:
//
//	insert into PostgreSQL (idempotent, verified) ─▶ delete the children (deposits, refund,
//	claims) ─▶ delete the transfer last, with its UID as precondition
//
// A key (customer_uuid, a tx hash, a recipient id) is therefore always in a Claim, in the
// archive, or in both; a crash at any point leaves the transfer live, and the next pass
// inserts again (a no-op) and finishes the deletes.
package archive
