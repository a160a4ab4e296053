// One TowerSketch array with one counter per RAM word, the same CM/ACU step and 3-deep
// forwarding as `packed.v`, for a like-for-like LUT comparison. SPLIT=0: one W-bit memory.
// SPLIT=1: the pipeline's layout (`CellRam`), the memory cut into the top H = 9*(W/9) bits
// (4K x 9 blocks, parity bits used) and the other W-H bits (plain 1/2/4-bit blocks).
module unpacked #(parameter W=8, A=16, SPLIT=0) (
  input clk, input valid, input [A-1:0] addr, input om_inf, input [31:0] om,
  output reg o_inf, output reg [31:0] o_om);
  localparam [31:0] M = (64'd1<<W)-1;
  localparam H = SPLIT ? 9 * (W / 9) : 0;
  reg s1v, s2v, wrv, d1v; reg [A-1:0] s1l, s2l, wrl, d1l; reg [W-1:0] rd_q; reg [1:0] sel; reg [W-1:0] wr_d, d1_d, d2_d;
  generate if (H == 0) begin : one
    reg [W-1:0] mem [0:(1<<A)-1];
    always @(posedge clk) begin rd_q <= mem[addr]; if (wrv) mem[wrl] <= wr_d; end
  end else begin : two
    reg [H-1:0] mh [0:(1<<A)-1];
    reg [W-H-1:0] ml [0:(1<<A)-1];
    always @(posedge clk) begin
      rd_q <= {mh[addr], ml[addr]};
      if (wrv) begin mh[wrl] <= wr_d[W-1:W-H]; ml[wrl] <= wr_d[W-H-1:0]; end
    end
  end endgenerate
  always @(posedge clk) begin
    s1v <= valid; s1l <= addr;
    sel <= (s2v && s1l==s2l) ? 2'd1 : (wrv && s1l==wrl) ? 2'd2 : (d1v && s1l==d1l) ? 2'd3 : 2'd0;
    s2v <= s1v; s2l <= s1l;
  end
  reg [W-1:0] v; always @* case (sel) 0: v = rd_q; 1: v = wr_d; 2: v = d1_d; default: v = d2_d; endcase
  wire [31:0] v32 = v; wire [31:0] c = v32 + 1;
  wire upd = (v32 != M) && (om_inf || v32 < om);
  always @(posedge clk) begin
    wrv <= s2v; wrl <= s2l; wr_d <= upd ? c[W-1:0] : v; d1v <= wrv; d1l <= wrl; d1_d <= wr_d; d2_d <= d1_d;
    if (upd && c != M) begin o_inf <= 0; o_om <= c; end else begin o_inf <= om_inf; o_om <= om; end
  end
endmodule
