import Failures
import HTTPServer
import QuoteVault

extension SyncBatch {
    /// Each operation answered as its `/v1` route answers: the same status, the same JSON, the same problem.
    static let v1Answer: Answer = { outcome in
        var writer = JSONWriter(capacity: 256)
        switch outcome {
        case .failure(let error):
            let failure = Failure(classifying: error)
            return (failure.status, failure.code, nil)
        case .success(.favorite(let quoteID, let added)):
            writer.favorite(quoteID)
            return (added ? 201 : 200, nil, writer.bytes)
        case .success(.collection(let collection, let created)):
            writer.collection(collection)
            return (created ? 201 : 200, nil, writer.bytes)
        case .success(.collectionQuote(let collectionID, let quoteID, let added)):
            writer.collectionQuote(collectionID: collectionID, quoteID: quoteID)
            return (added ? 201 : 200, nil, writer.bytes)
        case .success(.profile(let user)):
            writer.user(user)
            return (200, nil, writer.bytes)
        case .success(.removed):
            return (204, nil, nil)
        }
    }
}
