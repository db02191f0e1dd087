extension String {
    /// The string cut to at most `limit` UTF-8 bytes at a character boundary, followed by
    /// `marker` when anything was cut (the marker is not counted in `limit`). A negative limit
    /// counts as 0.
    package func utf8Prefix(_ limit: Int, marker: String = "") -> String {
        guard utf8.count > limit else { return self }
        var kept = startIndex
        var count = 0
        for index in indices {
            let width = self[index].utf8.count
            if count + width > limit { break }
            count += width
            kept = self.index(after: index)
        }
        return String(self[..<kept]) + marker
    }
}
