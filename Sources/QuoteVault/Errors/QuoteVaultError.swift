@_exported import Failures

/// What the services refuse: the one failure type every surface renders (`Failure`). The old name stays for the
/// code written against it.
public typealias QuoteVaultError = Failure
