internal import CCairo
import Foundation
public import SharedSession

/// Draws a run as a picture with Cairo: each stream's level over time in dBFS, the scene's cues
/// marked and labelled on the time axis, the marks where levels were read, and lanes below showing
/// what held when (the voice chat, the locked screen, the interruption).
public enum LevelPlot {
    /// Writes the plot of `run` as a PNG at `png` and an SVG at `svg`.
    ///
    /// - Throws: ``SessionError`` with code `fileError` when Cairo cannot write a file.
    public static func write(_ run: SceneRun, png: String, svg: String) throws(SessionError) {
        let layout = Layout(run: run)
        guard let image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(layout.width), Int32(layout.height))
        else { throw SessionError(code: .fileError, message: "Cairo could not make a surface for \(png)") }
        defer { cairo_surface_destroy(image) }
        draw(run, layout: layout, on: image)
        let status = cairo_surface_write_to_png(image, png)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw SessionError(
                code: .fileError,
                message: "Cairo could not write \(png): \(String(cString: cairo_status_to_string(status)))")
        }
        guard let vector = cairo_svg_surface_create(svg, Double(layout.width), Double(layout.height)) else {
            throw SessionError(code: .fileError, message: "Cairo could not make a surface for \(svg)")
        }
        draw(run, layout: layout, on: vector)
        cairo_surface_finish(vector)
        let svgStatus = cairo_surface_status(vector)
        cairo_surface_destroy(vector)
        guard svgStatus == CAIRO_STATUS_SUCCESS else {
            throw SessionError(
                code: .fileError,
                message: "Cairo could not write \(svg): \(String(cString: cairo_status_to_string(svgStatus)))")
        }
    }

    /// Where everything goes, in pixels.
    struct Layout {
        let width = 1640
        let left = 120.0
        let right = 1390.0
        let plotTop = 235.0
        let plotBottom = 675.0
        let floor = -60.0
        let ceiling = 0.0
        let laneTop = 735.0
        let laneHeight = 24.0
        let duration: Double
        let lanes: Int

        init(run: SceneRun) {
            duration = run.duration
            lanes = run.lanes.count
        }

        var height: Int { Int(laneTop + Double(lanes) * laneHeight + 60) }

        func x(_ time: Double) -> Double { left + (right - left) * time / duration }

        func y(_ level: Double) -> Double {
            let clamped = max(floor, min(ceiling, level))
            return plotBottom - (plotBottom - plotTop) * (clamped - floor) / (ceiling - floor)
        }
    }

    /// The loudness duck's tracks: the voice's loudness while it speaks, the movie's as heard (LUFS),
    /// and the depth (dB).
    static let voiceLoudness = "voice loudness (LUFS)"
    static let movieLoudness = "movie heard (LUFS)"
    static let duckDepth = "movie duck depth (dB)"

    /// A color per stream, the mix in grey.
    static func color(of name: String) -> (Double, Double, Double) {
        switch name {
        case voiceLoudness: (0.55, 0.82, 0.55)
        case movieLoudness: (0.50, 0.70, 0.95)
        case duckDepth: (0.75, 0.15, 0.15)
        case "movie": (0.12, 0.40, 0.75)
        case "feed": (0.93, 0.50, 0.10)
        case "voice": (0.17, 0.63, 0.27)
        case "notification": (0.58, 0.40, 0.74)
        default: (0.55, 0.55, 0.55)
        }
    }

    static let laneColors: [String: (Double, Double, Double)] = [
        "feed clip": color(of: "feed"), "voice chat": color(of: "voice"), "notification": color(of: "notification"),
        "other app": (0.55, 0.45, 0.35), "background": (0.45, 0.55, 0.65), "screen locked": (0.35, 0.35, 0.40),
        "interruption": (0.80, 0.20, 0.20), "movie paused": (0.60, 0.60, 0.20),
    ]

    private static func draw(_ run: SceneRun, layout: Layout, on surface: OpaquePointer) {
        guard let cr = cairo_create(surface) else { return }
        defer { cairo_destroy(cr) }
        let canvas = Canvas(cr: cr)
        canvas.fill(color: (1, 1, 1))

        // Title and subtitle.
        canvas.text(
            "watch-party: \(run.scene.title)", x: layout.left, y: 38, size: 24, bold: true, color: (0.1, 0.1, 0.1))
        let subtitle =
            "\(run.engine) · \(String(format: "%.1f s", run.duration)) · "
            + "levels in dBFS, \(run.tracks.first { $0.name != "mix" }?.method ?? "")"
        canvas.text(subtitle, x: layout.left, y: 62, size: 14, color: (0.35, 0.35, 0.35))

        // The grid: dB every 10, seconds every second.
        cairo_set_line_width(cr, 1)
        var level = layout.floor
        while level <= layout.ceiling {
            canvas.line(
                from: (layout.left, layout.y(level)), to: (layout.right, layout.y(level)), color: (0.88, 0.88, 0.88))
            canvas.text(
                String(format: "%.0f", level), x: layout.left - 10, y: layout.y(level) + 5, size: 13,
                color: (0.3, 0.3, 0.3), align: 1)
            level += 10
        }
        let step = layout.duration > 40 ? 5.0 : layout.duration > 20 ? 2.0 : 1.0
        var second = 0.0
        while second <= layout.duration + 1e-9 {
            canvas.line(
                from: (layout.x(second), layout.plotTop), to: (layout.x(second), layout.plotBottom),
                color: (0.93, 0.93, 0.93))
            canvas.text(
                String(format: "%.0f", second), x: layout.x(second), y: layout.plotBottom + 20, size: 13,
                color: (0.3, 0.3, 0.3), align: 0.5)
            second += step
        }
        canvas.text(
            "scene time (s)", x: (layout.left + layout.right) / 2, y: layout.plotBottom + 42, size: 14,
            color: (0.2, 0.2, 0.2), align: 0.5)
        cairo_save(cr)
        cairo_translate(cr, 30, (layout.plotTop + layout.plotBottom) / 2)
        cairo_rotate(cr, -Double.pi / 2)
        canvas.text("level (dBFS)", x: 0, y: 0, size: 14, color: (0.2, 0.2, 0.2), align: 0.5)
        cairo_restore(cr)

        // The cues: a dashed line through the plot and a slanted label above it; cues that took
        // effect at the same moment share one label.
        var cues: [(time: Double, caption: String)] = []
        for marker in run.markers where !marker.isMark {
            if let last = cues.last, abs(last.time - marker.time) < 1e-6 {
                cues[cues.count - 1].caption += " + " + marker.caption
            } else {
                cues.append((marker.time, marker.caption))
            }
        }
        for marker in cues {
            let x = layout.x(marker.time)
            cairo_set_dash(cr, [4, 4], 2, 0)
            canvas.line(from: (x, layout.plotTop - 6), to: (x, layout.plotBottom), color: (0.55, 0.55, 0.6))
            cairo_set_dash(cr, nil, 0, 0)
            cairo_save(cr)
            cairo_translate(cr, x + 3, layout.plotTop - 10)
            cairo_rotate(cr, -Double.pi / 4)
            canvas.text(marker.caption, x: 0, y: 0, size: 12.5, color: (0.2, 0.2, 0.3))
            cairo_restore(cr)
        }

        // The levels, the mix underneath.
        cairo_save(cr)
        cairo_rectangle(
            cr, layout.left, layout.plotTop - 2, layout.right - layout.left, layout.plotBottom - layout.plotTop + 4)
        cairo_clip(cr)
        let ordered = run.tracks.filter { $0.name == "mix" } + run.tracks.filter { $0.name != "mix" }
        for track in ordered {
            cairo_set_line_width(cr, track.name == "mix" ? 1.2 : track.name == "movie" ? 2.6 : 2.0)
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            var drawing = false
            for point in track.points {
                guard let level = point.level, level > layout.floor - 20 else {
                    drawing = false
                    continue
                }
                let position = (layout.x(point.time), layout.y(level))
                if drawing {
                    cairo_line_to(cr, position.0, position.1)
                } else {
                    cairo_move_to(cr, position.0, position.1)
                    drawing = true
                }
            }
            let (r, g, b) = color(of: track.name)
            cairo_set_source_rgba(cr, r, g, b, track.name == "mix" ? 0.7 : 1)
            cairo_stroke(cr)
        }
        cairo_restore(cr)

        // The marks: a diamond on each expected level (an open one at the floor for expected silence),
        // the mark's label upright from the bottom.
        for mark in run.marks {
            let x = layout.x(mark.time)
            for (name, expected) in mark.expected.sorted(by: { $0.key < $1.key }) {
                if let expected {
                    canvas.diamond(x: x, y: layout.y(expected), size: 6, color: color(of: name))
                } else {
                    canvas.diamond(x: x, y: layout.plotBottom - 7, size: 5, color: color(of: name), open: true)
                }
            }
            cairo_save(cr)
            cairo_translate(cr, x + 4, layout.plotBottom - 16)
            cairo_rotate(cr, -Double.pi / 2)
            canvas.text(mark.label, x: 0, y: 0, size: 11, color: (0.45, 0.45, 0.45), italic: true)
            cairo_restore(cr)
        }

        // The frame and the legend.
        cairo_set_line_width(cr, 1.2)
        cairo_rectangle(cr, layout.left, layout.plotTop, layout.right - layout.left, layout.plotBottom - layout.plotTop)
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3)
        cairo_stroke(cr)
        var legendY = layout.plotTop + 10
        canvas.text("streams", x: layout.right + 28, y: legendY, size: 14, bold: true, color: (0.2, 0.2, 0.2))
        for track in ordered.reversed() {
            legendY += 26
            cairo_set_line_width(cr, track.name == "movie" ? 3 : 2.2)
            canvas.line(
                from: (layout.right + 28, legendY - 5), to: (layout.right + 62, legendY - 5),
                color: color(of: track.name))
            canvas.text(track.name, x: layout.right + 70, y: legendY, size: 14, color: (0.15, 0.15, 0.15))
        }
        legendY += 34
        canvas.diamond(x: layout.right + 45, y: legendY - 5, size: 6, color: (0.4, 0.4, 0.4))
        canvas.text("a mark expects this", x: layout.right + 70, y: legendY, size: 13, color: (0.3, 0.3, 0.3))
        legendY += 22
        canvas.diamond(x: layout.right + 45, y: legendY - 5, size: 5, color: (0.4, 0.4, 0.4), open: true)
        canvas.text("a mark expects silence", x: layout.right + 70, y: legendY, size: 13, color: (0.3, 0.3, 0.3))
        legendY += 24
        cairo_set_dash(cr, [4, 4], 2, 0)
        canvas.line(
            from: (layout.right + 28, legendY - 5), to: (layout.right + 62, legendY - 5), color: (0.55, 0.55, 0.6))
        cairo_set_dash(cr, nil, 0, 0)
        canvas.text("a cue of the scene", x: layout.right + 70, y: legendY, size: 13, color: (0.3, 0.3, 0.3))

        // The lanes: what held when.
        canvas.text(
            "what held when", x: layout.left, y: layout.laneTop - 10, size: 13, bold: true, color: (0.2, 0.2, 0.2))
        for (index, lane) in run.lanes.enumerated() {
            let top = layout.laneTop + Double(index) * layout.laneHeight
            canvas.text(
                lane.name, x: layout.left - 10, y: top + layout.laneHeight / 2 + 5, size: 13, color: (0.25, 0.25, 0.25),
                align: 1)
            let (r, g, b) = laneColors[lane.name] ?? (0.5, 0.5, 0.5)
            for span in lane.spans {
                cairo_rectangle(
                    cr, layout.x(span.lowerBound), top + 4,
                    max(2, layout.x(span.upperBound) - layout.x(span.lowerBound)),
                    layout.laneHeight - 8)
                cairo_set_source_rgba(cr, r, g, b, 0.75)
                cairo_fill(cr)
            }
            canvas.line(
                from: (layout.left, top + layout.laneHeight), to: (layout.right, top + layout.laneHeight),
                color: (0.92, 0.92, 0.92))
        }
    }
}

/// The few drawing steps the plot repeats, over a Cairo context.
private struct Canvas {
    let cr: OpaquePointer

    func fill(color: (Double, Double, Double)) {
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_paint(cr)
    }

    func line(from start: (Double, Double), to end: (Double, Double), color: (Double, Double, Double)) {
        cairo_move_to(cr, start.0, start.1)
        cairo_line_to(cr, end.0, end.1)
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_stroke(cr)
    }

    func diamond(x: Double, y: Double, size: Double, color: (Double, Double, Double), open: Bool = false) {
        cairo_move_to(cr, x, y - size)
        cairo_line_to(cr, x + size, y)
        cairo_line_to(cr, x, y + size)
        cairo_line_to(cr, x - size, y)
        cairo_close_path(cr)
        if open {
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_fill_preserve(cr)
            cairo_set_source_rgb(cr, color.0, color.1, color.2)
            cairo_set_line_width(cr, 1.6)
        } else {
            cairo_set_source_rgb(cr, color.0, color.1, color.2)
            cairo_fill_preserve(cr)
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_set_line_width(cr, 1)
        }
        cairo_stroke(cr)
    }

    /// Draws `text` with its baseline at `y`; `align` 0 puts its start at `x`, 0.5 its middle, 1 its end.
    func text(
        _ text: String, x: Double, y: Double, size: Double, bold: Bool = false, color: (Double, Double, Double),
        align: Double = 0, italic: Bool = false
    ) {
        cairo_select_font_face(
            cr, "DejaVu Sans", italic ? CAIRO_FONT_SLANT_ITALIC : CAIRO_FONT_SLANT_NORMAL,
            bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, text, &extents)
        cairo_move_to(cr, x - extents.x_advance * align, y)
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_show_text(cr, text)
        cairo_new_path(cr)
    }
}
