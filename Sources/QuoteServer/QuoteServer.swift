@main struct QuoteServerMain { static func main() {} }
