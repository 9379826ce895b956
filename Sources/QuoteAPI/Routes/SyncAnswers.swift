import HTTPServer
import QuoteVault

extension SyncBatch.Answers {
    /// Each operation answered as its `/v1` route answers: the same status, the same JSON, the same problem.
    static let v1 = SyncBatch.Answers(
        outcome: { outcome in
            var writer = JSONWriter(capacity: 256)
            switch outcome {
            case .favorite(let quoteID, let added):
                writer.favorite(quoteID)
                return (added ? 201 : 200, writer.bytes)
            case .collection(let collection, let created):
                writer.collection(collection)
                return (created ? 201 : 200, writer.bytes)
            case .collectionQuote(let collectionID, let quoteID, let added):
                writer.collectionQuote(collectionID: collectionID, quoteID: quoteID)
                return (added ? 201 : 200, writer.bytes)
            case .profile(let user):
                writer.user(user)
                return (200, writer.bytes)
            case .removed:
                return (204, nil)
            }
        },
        failure: { error in
            let problem = HTTPError.answering(error)
            return (problem.status, problem.code)
        })
}
